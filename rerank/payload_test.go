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

// grouped reads a window's payloads of several kinds in one call
// (GroupedPayloads), and counts its reads of one kind (WindowPayloads).
type grouped struct {
	oneStep
	each *int
}

func (p grouped) PayloadsFrom(name, model string, ids []string) ([][]byte, error) {
	*p.each++
	out := make([][]byte, len(ids))
	for i, id := range ids {
		out[i], _, _ = p.PayloadFrom(name, model, id)
	}
	return out, nil
}

func (p grouped) PayloadsFromKinds(names, models, ids []string) ([][][]byte, error) {
	out := make([][][]byte, len(names))
	for k := range names {
		out[k] = make([][]byte, len(ids))
		for i, id := range ids {
			out[k][i], _, _ = p.PayloadFrom(names[k], models[k], id)
		}
	}
	return out, nil
}

// TestReadWindowPayloadKinds: payloads read together are each kind's
// ReadWindowPayloads, found in the window's memo without another read; a
// kind not read together, another window and a store that cannot read
// together are read as before.
func TestReadWindowPayloadKinds(t *testing.T) {
	ids := []string{"d1", "d2", "d3"}
	kinds := []PayloadKind{{"tweak", "m1"}, {"lsa", "m1"}, {"s2net", "m2"}}
	tests := []struct {
		name      string
		p         func(each *int) Payloads
		memo      bool
		read      PayloadKind
		wantReads int // ReadWindowPayloads' reads of one kind
	}{
		{"together", func(n *int) Payloads { return grouped{oneStep{"m1"}, n} }, true, kinds[1], 0},
		{"another model, together", func(n *int) Payloads { return grouped{oneStep{"m1"}, n} }, true, kinds[2], 0},
		{"a kind not read together", func(n *int) Payloads { return grouped{oneStep{"m1"}, n} }, true, PayloadKind{"terms", "m1"}, 1},
		{"no window memo", func(n *int) Payloads { return grouped{oneStep{"m1"}, n} }, false, kinds[0], 1},
	}
	for _, tc := range tests {
		each := 0
		p := tc.p(&each)
		ctx := t.Context()
		if tc.memo {
			ctx = withWindowMemo(ctx)
		}
		if err := ReadWindowPayloadKinds(ctx, p, kinds, ids); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := ReadWindowPayloads(ctx, p, tc.read.Name, tc.read.Model, ids)
		if err != nil || each != tc.wantReads {
			t.Errorf("%s: %d reads of one kind (%v), want %d", tc.name, each, err, tc.wantReads)
		}
		for i, id := range ids {
			want, _, _ := ReadPayload(p, tc.read.Name, tc.read.Model, id)
			if string(got[i]) != string(want) || (got[i] == nil) != (want == nil) {
				t.Errorf("%s: payload of %s = %q, want %q", tc.name, id, got[i], want)
			}
		}
	}
	// A store that reads one kind at a time is left to do so.
	if err := ReadWindowPayloadKinds(withWindowMemo(t.Context()), oneStep{"m1"}, kinds, ids); err != nil {
		t.Error(err)
	}
}
