package stages

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// TestMinDist checks the minimum pair distance on documents worked out by
// hand.
func TestMinDist(t *testing.T) {
	tests := []struct {
		doc, terms string
		want       int
		ok         bool
	}{
		{"a b", "a b", 1, true},
		{"a x x b", "a b", 3, true},
		{"b x a", "a b", 2, true},
		// The nearest pair, not the first: a..b is 4 apart, b..a 1.
		{"a x x x b a", "a b", 1, true},
		// Repeats of one term are no pair.
		{"a a a", "a b", 0, false},
		{"a x a", "a", 0, false},
		// Three terms: the closest two of them.
		{"a x x b x c x x x a", "a b c", 2, true},
		{"c x x x x a x x b", "a b c", 3, true},
		{"", "a b", 0, false},
		{"a b", "", 0, false},
		{"x y z", "a b", 0, false},
	}
	for _, tc := range tests {
		got, ok := minDist(strings.Fields(tc.doc), slices.Sorted(slices.Values(strings.Fields(tc.terms))))
		if got != tc.want || ok != tc.ok {
			t.Errorf("minDist(%q, %q) = %d, %v; want %d, %v", tc.doc, tc.terms, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzMinDist checks minDist against the distance of every pair of
// positions.
func FuzzMinDist(f *testing.F) {
	f.Add([]byte{0, 1, 2, 0, 3, 1}, uint8(3))
	f.Add([]byte{}, uint8(2))
	f.Fuzz(func(t *testing.T, raw []byte, k uint8) {
		if len(raw) > 200 {
			raw = raw[:200]
		}
		words := []string{"a", "b", "c", "d", "e", "f"}
		doc := make([]string, len(raw))
		for i, b := range raw {
			doc[i] = words[int(b)%len(words)]
		}
		terms := words[:int(k)%(len(words)+1)]
		got, ok := minDist(doc, terms)
		want := -1
		for i := range doc {
			for j := i + 1; j < len(doc); j++ {
				if doc[i] != doc[j] && slices.Contains(terms, doc[i]) && slices.Contains(terms, doc[j]) && (want < 0 || j-i < want) {
					want = j - i
				}
			}
		}
		if ok != (want >= 0) || (ok && got != want) {
			t.Fatalf("minDist(%v, %v) = %d, %v; want %d", doc, terms, got, ok, want)
		}
	})
}

// TestProximityScore checks scores against BM25 plus Tao and Zhai's π
// worked out by hand. Query "a b" over N = 10 documents, df(a) = 2,
// df(b) = 5: idf(a) = log 4.4, idf(b) = log 2; k1 = 1.2, b = 0 (no length
// normalisation), so a term counted once adds its idf, twice idf·4.4/3.2.
// δ: d1 "a b" 1, d2 "a x x b" 3, d3 "a a" no pair, d4 "x" no pair.
func TestProximityScore(t *testing.T) {
	stats := mapStats{n: 10, df: map[string]uint64{"a": 2, "b": 5}}
	cands := []rerank.Candidate{
		{Doc: dataset.Doc{ID: "d1", Text: "a b"}},
		{Doc: dataset.Doc{ID: "d2", Text: "a x x b"}},
		{Doc: dataset.Doc{ID: "d3", Text: "a a"}},
		{Doc: dataset.Doc{ID: "d4", Text: "x"}},
	}
	ia, ib := math.Log(4.4), math.Log(2)
	pi := func(d float64) float64 { return math.Log(0.3 + math.Exp(-d)) }
	far := math.Log(0.3)
	tests := []struct {
		name string
		bm25 bool
		want []float64
	}{
		{"bm25 + π", true, []float64{ia + ib + pi(1), ia + ib + pi(3), ia*4.4/3.2 + far, far}},
		{"π alone", false, []float64{pi(1), pi(3), far, far}},
	}
	for _, tc := range tests {
		s := &Proximity{Analyze: strings.Fields, Alpha: 0.3}
		if tc.bm25 {
			s.BM25 = &BM25{Stats: stats, Analyze: strings.Fields, K1: 1.2, B: 0}
		}
		got, err := s.Score(context.Background(), rerank.Query{Text: "a b a"}, cands)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tc.want {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("%s, %s: %v, want %v", tc.name, cands[i].ID, got[i], tc.want[i])
			}
		}
	}
	if p1, p3 := pi(1), pi(3); !(p1 > p3 && p3 > far) {
		t.Errorf("π not decreasing in δ: %v, %v, %v", p1, p3, far)
	}
}

// TestProximityOptions checks the factory's defaults and that it refuses
// settings outside their ranges, naming the option.
func TestProximityOptions(t *testing.T) {
	env := rerank.Env{Stats: flatStats{}}
	st, err := rerank.NewStage(rerank.StageSpec{Type: "proximity"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if p := st.(*Proximity); p.Alpha != 0.3 || p.BM25 == nil || p.BM25.K1 != 1.2 || p.BM25.B != 0.75 || p.Name() != "proximity" {
		t.Errorf("defaults: %+v", p)
	}
	st, err = rerank.NewStage(rerank.StageSpec{Type: "proximity", Name: "pi", Options: map[string]any{"bm25": false}}, env)
	if err != nil {
		t.Fatal(err)
	}
	if p := st.(*Proximity); p.BM25 != nil || p.Name() != "pi" {
		t.Errorf("bm25 false: %+v", p)
	}
	refusesOptions(t, "proximity", env, []optionCase{
		{map[string]any{"alpha": 0}, "option alpha"},
		{map[string]any{"alpha": math.Inf(1)}, "option alpha"},
		{map[string]any{"alpha": math.NaN()}, "option alpha"},
		{map[string]any{"k1": -1}, "option k1"},
		{map[string]any{"b": 1.5}, "option b"},
		{map[string]any{"window": 5}, "unknown option window"},
	})
}
