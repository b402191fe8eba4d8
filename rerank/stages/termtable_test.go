package stages

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/tweak"
)

// FuzzTermTable: a table built from any terms payload counts every term
// as index.DecodeTermList decodes it, and 0 for others, with the same
// total; a malformed payload is DecodeTermList's error.
func FuzzTermTable(f *testing.F) {
	f.Add("bank doha bank visa account", "bank visa loan")
	f.Add("", "x")
	f.Add("a a a b c c d e f g h i j k l m n o p q r s t u v w x y z", "z a q")
	f.Fuzz(func(t *testing.T, text, probe string) {
		for _, b := range [][]byte{index.EncodeTermCounts(strings.Fields(text)), []byte(text)} {
			want, werr := index.DecodeTermList(b)
			tab, err := newTermTable(b, termCounts)
			if (err != nil) != (werr != nil) {
				t.Fatalf("%q: table error %v, DecodeTermList's %v", b, err, werr)
			}
			if err != nil {
				if !errors.Is(err, werr) && err.Error() != werr.Error() {
					t.Fatalf("%q: table error %v, DecodeTermList's %v", b, err, werr)
				}
				continue
			}
			total := 0
			counts := map[string]int{}
			for _, tc := range want {
				total += tc.Count
				counts[tc.Term] = tc.Count
			}
			if int(tab.total) != total {
				t.Fatalf("%q: total %v, want %d", b, tab.total, total)
			}
			// Every term of the document, some it lacks, in any order.
			var terms []string
			for _, tc := range want {
				terms = append(terms, tc.Term)
			}
			terms = append(terms, strings.Fields(probe)...)
			terms = slices.Compact(slices.Sorted(slices.Values(append(terms, "", probe))))
			vals, found := make([]float64, len(terms)), make([]bool, len(terms))
			tab.values(newQueryTerms(terms), vals, found)
			for j, term := range terms {
				c, ok := counts[term]
				if found[j] != ok || int(vals[j]) != c {
					t.Fatalf("%q: %q found %v count %v, want %v %d", b, term, found[j], vals[j], ok, c)
				}
			}
		}
	})
}

// weightedVector returns a TWEAK vector of the distinct words of text,
// weighed by seed and each word's bytes (some negative, some zero).
func weightedVector(text string, seed float64) tweak.Vector {
	words := slices.Compact(slices.Sorted(slices.Values(strings.Fields(text))))
	v := tweak.Vector{Terms: words, Weights: make([]float64, len(words))}
	for i, w := range words {
		v.Weights[i] = seed * float64(int(w[0])%7-2) / float64(len(w))
	}
	return v
}

// FuzzTableCosine: a TWEAK vector's table scores a query to the bit as
// tweak.CosineEncoded scores it from the encoded vector.
func FuzzTableCosine(f *testing.F) {
	f.Add("bank doha visa account salary", "bank visa loan", 0.5)
	f.Add("a", "b", 1.0)
	f.Add("zero", "zero", 0.0)
	f.Fuzz(func(t *testing.T, doc, query string, seed float64) {
		if math.IsNaN(seed) || math.IsInf(seed, 0) || math.Abs(seed) > 1e6 {
			return
		}
		b, err := weightedVector(doc, seed).AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		q := weightedVector(query, 1+seed/3)
		want, werr := tweak.CosineEncoded(q, b)
		tab, err := newTermTable(b, tweak.EachWeight)
		if (err != nil) != (werr != nil) {
			t.Fatalf("table error %v, CosineEncoded's %v", err, werr)
		}
		if err != nil {
			return
		}
		vals, found := make([]float64, len(q.Terms)), make([]bool, len(q.Terms))
		if got := tableCosine(q, newQueryTerms(q.Terms), q.Norm(), tab, vals, found); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("doc %q, query %q: table cosine %v, CosineEncoded %v", doc, query, got, want)
		}
	})
}

// TestTermTableCollidingHashes: terms whose hashes are equal are told
// apart by the terms themselves, short ones by their keys and long ones
// by their records.
func TestTermTableCollidingHashes(t *testing.T) {
	b := index.EncodeTermCounts(strings.Fields("bank bank doha visa visa visa accounting accounting accounting accounting internationalization"))
	tab, err := newTermTable(b, termCounts)
	if err != nil {
		t.Fatal(err)
	}
	// Every term and every probe hashing alike: one filter bit pair, one
	// tag, one chain of slots.
	const h = 7
	tab.filter = [8]uint64{}
	a, c := filterBits(h)
	tab.filter[a>>6] |= 1 << (a & 63)
	tab.filter[c>>6] |= 1 << (c & 63)
	clear(tab.slots)
	mask := len(tab.slots)/2 - 1
	for i, off := 0, 0; off < len(tab.recs); i++ {
		v, term, next := tab.record(off)
		s := (h + i) & mask
		tab.slots[2*s], tab.slots[2*s+1] = termKey(string(term), h, uint32(off)+1), math.Float64bits(v)
		off = next
	}
	terms := []string{"account", "accounting", "accountings", "bank", "internationalisation", "internationalization", "visa", "zebra"}
	q := newQueryTerms(terms)
	for j := range terms {
		q.setHash(j, h)
	}
	vals, found := make([]float64, len(terms)), make([]bool, len(terms))
	tab.values(q, vals, found)
	if want := []float64{0, 4, 0, 2, 0, 1, 3, 0}; !slices.Equal(vals, want) || !slices.Equal(found, []bool{false, true, false, true, false, true, true, false}) {
		t.Errorf("values %v found %v, want %v", vals, found, want)
	}
}

// TestTermKey: two terms of at most shortTerm bytes have equal keys
// exactly when they are equal, and no key is 0 or a long term's.
func TestTermKey(t *testing.T) {
	terms := []string{"", "a", "a\x00", "\x00", "ab", "ba", "abcdefg", "abcdef", "abcdefh", "\xff\xff\xff\xff\xff\xff\xff"}
	for _, x := range terms {
		kx := termKey(x, 0xffffffffffffffff, 0xffffffff)
		if kx == 0 || kx >= longKey {
			t.Errorf("%q: key %#x", x, kx)
		}
		for _, y := range terms {
			if ky := termKey(y, 0, 0); (kx == ky) != (x == y) {
				t.Errorf("%q key %#x, %q key %#x", x, kx, y, ky)
			}
		}
	}
	if k := termKey("abcdefgh", 0x123456789abcdef0, 42); k != longKey|0x345678<<32|42 {
		t.Errorf("long key %#x", k)
	}
}
