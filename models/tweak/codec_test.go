package tweak

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestVectorCodecRoundTrip(t *testing.T) {
	m := trainedModel(t)
	ds := testData(t)
	enc := NewEncoder(m)
	if enc.PayloadName() != "tweak" || enc.ModelID() != m.ID() {
		t.Fatalf("encoder %q %q", enc.PayloadName(), enc.ModelID())
	}
	q := m.QueryVector(ds.Queries[0].FullText())
	for _, d := range ds.Corpus {
		b, err := enc.EncodePayload(d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeVector(b)
		if err != nil {
			t.Fatalf("%s: %v", d.ID, err)
		}
		want := m.DocVector(d.Title, d.Text)
		if len(got.Terms) != len(want.Terms) {
			t.Fatalf("%s: %d terms, want %d", d.ID, len(got.Terms), len(want.Terms))
		}
		for i := range want.Terms {
			if got.Terms[i] != want.Terms[i] || math.Abs(got.Weights[i]-want.Weights[i]) > 1e-6*math.Max(1, want.Weights[i]) {
				t.Fatalf("%s: entry %d = %s:%v, want %s:%v", d.ID, i, got.Terms[i], got.Weights[i], want.Terms[i], want.Weights[i])
			}
		}
		if a, b := Cosine(q, got), Cosine(q, want); math.Abs(a-b) > 1e-6 {
			t.Errorf("%s: cosine from payload %v, from text %v", d.ID, a, b)
		}
		// Front coding and float32 weights beat a plain length-prefixed
		// term + float64 layout.
		n := 0
		for _, term := range want.Terms {
			n += 1 + len(term) + 8
		}
		if len(b) >= n {
			t.Errorf("%s: %d bytes for %d terms (plain layout: %d)", d.ID, len(b), len(want.Terms), n)
		}
	}
}

func TestDecodeVectorRejects(t *testing.T) {
	good, err := Vector{Terms: []string{"visa", "visit"}, Weights: []float64{1.5, 0.25}}.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string][]byte{
		"empty":          nil,
		"version":        append([]byte{9}, good[1:]...),
		"truncated":      good[:len(good)-1],
		"trailing":       append(append([]byte(nil), good...), 0),
		"huge count":     {1, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"bad prefix":     {1, 1, 5, 1, 'a', 0, 0, 0, 0},
		"unsorted":       {1, 2, 0, 1, 'b', 0, 0, 0x80, 0x3f, 0, 1, 'a', 0, 0, 0x80, 0x3f},
		"nan weight":     {1, 1, 0, 1, 'a', 0, 0, 0xc0, 0x7f},
		"suffix overrun": {1, 1, 0, 9, 'a'},
	}
	for name, b := range tests {
		if _, err := DecodeVector(b); !errors.Is(err, ErrBadVector) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := (Vector{Terms: []string{"b", "a"}, Weights: []float64{1, 1}}).AppendBinary(nil); err == nil {
		t.Error("unsorted vector encoded")
	}
}

func FuzzDecodeVector(f *testing.F) {
	good, _ := Vector{Terms: []string{"qatar", "qatari", "visa"}, Weights: []float64{1, 2, 3}}.AppendBinary(nil)
	f.Add(good)
	f.Add([]byte{1, 0})
	q := Vector{Terms: []string{"a", "qatar", "visa", "z"}, Weights: []float64{0.5, 2, 1, 3}}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeVector(b)
		// CosineEncoded reads what DecodeVector reads: it refuses the
		// same inputs and scores as Cosine does, bit for bit.
		c, cerr := CosineEncoded(q, b)
		if (cerr == nil) != (err == nil) {
			t.Fatalf("DecodeVector: %v; CosineEncoded: %v", err, cerr)
		}
		if err != nil {
			return
		}
		if want := Cosine(q, v); c != want && !(math.IsNaN(c) && math.IsNaN(want)) {
			t.Fatalf("CosineEncoded = %v, Cosine of the decoded vector %v", c, want)
		}
		// A decodable input re-encodes, and decodes back to the same vector
		// (byte equality would be too strict: varints have padded forms).
		again, err := v.AppendBinary(nil)
		if err != nil {
			t.Fatalf("decoded vector does not encode: %v", err)
		}
		w, err := DecodeVector(again)
		if err != nil {
			t.Fatalf("re-encoded vector does not decode: %v", err)
		}
		if !slices.Equal(w.Terms, v.Terms) || !slices.Equal(w.Weights, v.Weights) {
			t.Fatalf("round trip changed %v to %v", v, w)
		}
	})
}
