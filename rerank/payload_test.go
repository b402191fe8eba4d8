package rerank

import "testing"

// twoStep is a Payloads without PayloadFrom: ReadPayload checks its model
// first.
type twoStep struct{ model string }

func (p twoStep) Payload(name, docID string) ([]byte, bool, error) {
	return []byte(name + "/" + docID), true, nil
}
func (p twoStep) PayloadModel(string) string { return p.model }

// oneStep answers PayloadFrom only: ReadPayload must not call the others.
type oneStep struct{ model string }

func (oneStep) Payload(string, string) ([]byte, bool, error) { panic("Payload called") }
func (oneStep) PayloadModel(string) string                   { panic("PayloadModel called") }
func (p oneStep) PayloadFrom(name, model, docID string) ([]byte, bool, error) {
	if model != p.model {
		return nil, false, nil
	}
	return []byte(name + "/" + docID), true, nil
}

func TestReadPayload(t *testing.T) {
	tests := []struct {
		name string
		p    Payloads
		want string // "" for none
	}{
		{"no payloads", nil, ""},
		{"two steps, its model", twoStep{"m1"}, "tweak/d1"},
		{"two steps, another model", twoStep{"m2"}, ""},
		{"two steps, no such payload", twoStep{""}, ""},
		{"one step, its model", oneStep{"m1"}, "tweak/d1"},
		{"one step, another model", oneStep{"m2"}, ""},
	}
	for _, tc := range tests {
		b, ok, err := ReadPayload(tc.p, "tweak", "m1", "d1")
		if err != nil || ok != (tc.want != "") || string(b) != tc.want {
			t.Errorf("%s: ReadPayload = %q, %v, %v; want %q", tc.name, b, ok, err, tc.want)
		}
	}
}
