package stages

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestDecodedPayloads: a payload is decoded once while its document's
// bytes stay the same, in the same memory or in a copy; bytes that
// change are decoded again, and a failing decode names the document.
func TestDecodedPayloads(t *testing.T) {
	c := newDecodedPayloads()
	decodes := 0
	decode := func(b []byte) (any, int, error) {
		decodes++
		if strings.HasPrefix(string(b), "bad") {
			return nil, 0, errors.New("bad payload")
		}
		return strings.ToUpper(string(b)), len(b), nil
	}
	ids := []string{"a", "b", "c"}
	a, b := []byte("alpha"), []byte("beta")
	get := func(payloads ...[]byte) []any {
		t.Helper()
		out, err := c.get("k", ids, payloads, decode)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, step := range []struct {
		name     string
		payloads [][]byte
		want     []any
		decodes  int
	}{
		{"first read", [][]byte{a, b, nil}, []any{"ALPHA", "BETA", nil}, 2},
		{"same bytes", [][]byte{a, b, nil}, []any{"ALPHA", "BETA", nil}, 2},
		{"a copy", [][]byte{slices.Clone(a), b, nil}, []any{"ALPHA", "BETA", nil}, 2},
		{"changed", [][]byte{a, []byte("gamma"), nil}, []any{"ALPHA", "GAMMA", nil}, 3},
	} {
		if got := get(step.payloads...); !slices.Equal(got, step.want) || decodes != step.decodes {
			t.Errorf("%s: %v after %d decodes, want %v after %d", step.name, got, decodes, step.want, step.decodes)
		}
	}
	if _, err := c.get("k", ids, [][]byte{nil, nil, []byte("bad")}, decode); err == nil || !strings.Contains(err.Error(), "document c") {
		t.Errorf("a failing decode: %v, want an error naming document c", err)
	}
}
