package deepmatch

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// TestInputCodec round-trips inputs to the bit and refuses malformed
// encodings with ErrBadInput.
func TestInputCodec(t *testing.T) {
	for _, in := range []Input{
		{},
		{Idx: []uint32{0}, Val: []float64{1}},
		{Idx: []uint32{3, 4, 900}, Val: []float64{0.1, -0.25, math.SmallestNonzeroFloat64}},
	} {
		b, err := in.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeInput(b, 1000)
		if err != nil {
			t.Fatalf("%v: %v", in, err)
		}
		if !slices.Equal(got.Idx, in.Idx) || !slices.Equal(got.Val, in.Val) {
			t.Fatalf("decoded %v, encoded %v", got, in)
		}
	}
	if _, err := (Input{Idx: []uint32{2, 2}, Val: []float64{1, 1}}).AppendBinary(nil); err == nil {
		t.Error("ids not ascending encoded")
	}
	valid, _ := (Input{Idx: []uint32{3, 9}, Val: []float64{0.5, 0.5}}).AppendBinary(nil)
	nan := slices.Clone(valid)
	copy(nan[len(nan)-8:], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f})
	for name, tc := range map[string]struct {
		b     []byte
		vocab int
	}{
		"empty":               {nil, 10},
		"other version":       {append([]byte{9}, valid[1:]...), 10},
		"id past vocabulary":  {valid, 9},
		"truncated":           {valid[:len(valid)-1], 10},
		"trailing bytes":      {append(slices.Clone(valid), 0), 10},
		"repeated id":         {[]byte{inputCodec, 2, 3, 0}, 10},
		"count past the data": {[]byte{inputCodec, 200, 1}, 10},
		"NaN value":           {nan, 10},
	} {
		if _, err := DecodeInput(tc.b, tc.vocab); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s: %v, want ErrBadInput", name, err)
		}
	}
}

// FuzzDecodeInput: any bytes decode or fail with ErrBadInput, never
// panic, and what decodes encodes to bytes that decode to it again.
func FuzzDecodeInput(f *testing.F) {
	valid, _ := (Input{Idx: []uint32{3, 9}, Val: []float64{0.5, -1}}).AppendBinary(nil)
	f.Add(valid)
	f.Add([]byte{inputCodec, 0})
	f.Add([]byte{inputCodec, 2, 3, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := DecodeInput(b, 50)
		if err != nil {
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("error %v does not wrap ErrBadInput", err)
			}
			return
		}
		again, err := in.AppendBinary(nil)
		if err != nil {
			t.Fatalf("decoded %v from %x, which does not encode: %v", in, b, err)
		}
		back, err := DecodeInput(again, 50)
		if err != nil || !slices.Equal(back.Idx, in.Idx) || !slices.Equal(back.Val, in.Val) {
			t.Fatalf("%x decodes to %v, re-encoded %x to %v (%v)", b, in, again, back, err)
		}
	})
}

// TestVectorCodec round-trips candidate vectors to the bit and refuses a
// vector of another length, a truncated one and a value not finite.
func TestVectorCodec(t *testing.T) {
	v := []float64{0.5, -2, math.SmallestNonzeroFloat64}
	b := appendVector(nil, v)
	got, err := decodeVector(b, 3)
	if err != nil || !slices.Equal(got, v) {
		t.Fatalf("decoded %v, %v; encoded %v", got, err, v)
	}
	inf := appendVector(nil, []float64{1, math.Inf(1), 0})
	for name, tc := range map[string]struct {
		b   []byte
		dim int
	}{
		"another length": {b, 4},
		"truncated":      {b[:len(b)-1], 3},
		"an input":       {[]byte{inputCodec, 0}, 0},
		"not finite":     {inf, 3},
	} {
		if _, err := decodeVector(tc.b, tc.dim); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s: %v, want ErrBadInput", name, err)
		}
	}
}

// FuzzDecodeVector: any bytes decode or fail with ErrBadInput, never
// panic, and what decodes encodes to bytes that decode to it again.
func FuzzDecodeVector(f *testing.F) {
	f.Add(appendVector(nil, []float64{1, 2, 3}))
	f.Add([]byte{vectorCodec, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeVector(b, 3)
		if err != nil {
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("error %v does not wrap ErrBadInput", err)
			}
			return
		}
		back, err := decodeVector(appendVector(nil, v), 3)
		if err != nil || !slices.Equal(back, v) {
			t.Fatalf("%x decodes to %v, which re-encoded decodes to %v (%v)", b, v, back, err)
		}
	})
}

// TestWithQueryMeta checks that adding "#q" leaves the tokens it was
// given as they were, spare capacity included: a window's stages share
// one analysis of the query.
func TestWithQueryMeta(t *testing.T) {
	shared := make([]string, 2, 3)
	shared[0], shared[1] = "visa", "renew"
	got := withQueryMeta(shared, true)
	if !slices.Equal(got, []string{"visa", "renew", tokQuery}) {
		t.Errorf("with meta: %q", got)
	}
	if spare := shared[:3]; spare[2] != "" {
		t.Errorf("the shared tokens' spare capacity now holds %q", spare[2])
	}
	if got := withQueryMeta(shared, false); !slices.Equal(got, shared) {
		t.Errorf("without meta: %q", got)
	}
}
