package wmd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/semrank/semrank/models/embed"
)

// randomSpace returns a space over nw random words and nd random
// documents of 1..8 words.
func randomSpace(t testing.TB, nw, nd int, seed uint64) (*Space, []Doc) {
	r := rand.New(rand.NewPCG(seed, 1))
	words := make([]string, nw)
	data := make([]float64, nw*5)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	for i := range data {
		data[i] = r.NormFloat64()
	}
	v, err := embed.NewVectors(words, 5, data)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSpace(v)
	docs := make([]Doc, nd)
	for d := range docs {
		toks := make([]string, 1+r.IntN(8))
		for k := range toks {
			toks[k] = words[r.IntN(nw)]
		}
		docs[d] = s.DocFromTokens(toks)
	}
	return s, docs
}

func TestKNNMatchesExhaustive(t *testing.T) {
	s, docs := randomSpace(t, 60, 300, 4)
	idx := s.NewIndex(docs)
	ctx := context.Background()
	for qi := 0; qi < 10; qi++ {
		q := docs[qi]
		for _, k := range []int{1, 5, 20} {
			_, st, ex := knnMatchesExhaustive(t, idx, q, k, fmt.Sprintf("query %d", qi))
			if st.WMD > ex.WMD {
				t.Errorf("pruned search solved %d problems, exhaustive %d", st.WMD, ex.WMD)
			}
		}
	}
	// The query itself is its own nearest neighbour unless excluded.
	nb, _, _ := idx.KNN(ctx, docs[3], 1, Options{})
	if nb[0].Doc != 3 && nb[0].Dist != 0 {
		t.Errorf("nearest of doc 3 = %v", nb)
	}
	nb, _, _ = idx.KNN(ctx, docs[3], 3, Options{Exclude: func(i int) bool { return i == 3 }, Prefetch: 30})
	for _, n := range nb {
		if n.Doc == 3 {
			t.Error("excluded document returned")
		}
	}
}

func TestBoundsOrder(t *testing.T) {
	s, docs := randomSpace(t, 40, 80, 7)
	for i := 1; i < len(docs); i++ {
		a, b := docs[0], docs[i]
		w, err := s.WMD(a, b)
		if err != nil {
			t.Fatal(err)
		}
		ic, _ := ict(a.Weights, b.Weights, s.Costs(a, b, nil), nil)
		if wcd, rw := s.WCD(a, b), s.RWMD(a, b); wcd > w+1e-12 || rw > ic+1e-12 || ic > w+1e-12 {
			t.Fatalf("doc %d: WCD %g, RWMD %g, ICT %g, WMD %g: want WCD, RWMD ≤ ICT ≤ WMD", i, wcd, rw, ic, w)
		}
	}
	empty := Doc{}
	if w, _ := s.WMD(empty, docs[0]); !math.IsInf(w, 1) {
		t.Errorf("WMD with an empty document = %g", w)
	}
	if _, _, err := s.NewIndex(docs).KNN(context.Background(), empty, 3, Options{}); err == nil {
		t.Error("empty query accepted")
	}
	if _, _, err := s.NewIndex(docs).KNN(context.Background(), docs[0], 0, Options{}); err == nil {
		t.Error("k = 0 accepted")
	}
}

// TestSearchCancelled: both searches return the context's error once it
// is cancelled, whichever documents Exclude skips.
func TestSearchCancelled(t *testing.T) {
	s, docs := randomSpace(t, 60, 300, 4)
	idx := s.NewIndex(docs)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		exclude func(int) bool
	}{
		{"all documents", nil},
		{"even documents excluded", func(i int) bool { return i%2 == 0 }},
		{"every 64th document excluded", func(i int) bool { return i%64 == 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opt := Options{Exclude: tc.exclude}
			if _, _, err := idx.KNN(ctx, docs[1], 3, opt); !errors.Is(err, context.Canceled) {
				t.Errorf("KNN: err = %v, want %v", err, context.Canceled)
			}
			if _, _, err := idx.Exhaustive(ctx, docs[1], 3, opt); !errors.Is(err, context.Canceled) {
				t.Errorf("Exhaustive: err = %v, want %v", err, context.Canceled)
			}
		})
	}
}

// knnMatchesExhaustive runs the pruned and the exhaustive search for q and
// fails the test, naming what, unless they return the same neighbours. It
// returns them and both searches' statistics.
func knnMatchesExhaustive(t *testing.T, idx *Index, q Doc, k int, what string) ([]Neighbor, Stats, Stats) {
	t.Helper()
	ctx := context.Background()
	want, ex, err := idx.Exhaustive(ctx, q, k, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, st, err := idx.KNN(ctx, q, k, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s, k %d: pruned %v, exhaustive %v", what, k, got, want)
	}
	return got, st, ex
}

// TestKNNPairs: searches from an index's own documents sharing Pairs
// return, in any order and concurrently, each document's k nearest by
// WMD solved with the lower-numbered document's words as rows, as
// Space.WMD gives them; and later searches read pairs earlier ones solved.
func TestKNNPairs(t *testing.T) {
	s, docs := randomSpace(t, 60, 150, 21)
	idx := s.NewIndex(docs)
	ctx := context.Background()
	const k, queries = 5, 40
	want := make([][]Neighbor, queries)
	for self := range want {
		var all []Neighbor
		for d := range docs {
			if d == self {
				continue
			}
			w, err := s.WMD(docs[min(self, d)], docs[max(self, d)])
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, Neighbor{d, w})
		}
		slices.SortFunc(all, func(a, b Neighbor) int {
			if less(a, b) {
				return -1
			}
			return 1
		})
		want[self] = all[:k]
	}
	search := func(self int, pairs *Pairs) ([]Neighbor, Stats) {
		nb, st, err := idx.KNN(ctx, docs[self], k, Options{
			Exclude: func(i int) bool { return i == self }, Pairs: pairs, Self: self})
		if err != nil {
			t.Fatal(err)
		}
		return nb, st
	}
	orders := map[string][]int{"forward": {}, "backward": {}}
	for self := range queries {
		orders["forward"] = append(orders["forward"], self)
		orders["backward"] = append(orders["backward"], queries-1-self)
	}
	for name, order := range orders {
		pairs, shared := &Pairs{}, 0
		for _, self := range order {
			nb, st := search(self, pairs)
			shared += st.Shared
			if !reflect.DeepEqual(nb, want[self]) {
				t.Errorf("%s, document %d: %v, want %v", name, self, nb, want[self])
			}
		}
		if shared == 0 {
			t.Errorf("%s: no search read a pair another had solved", name)
		}
	}
	pairs := &Pairs{}
	errs := make(chan string, queries)
	for self := range queries {
		go func() {
			if nb, _ := search(self, pairs); !reflect.DeepEqual(nb, want[self]) {
				errs <- fmt.Sprintf("concurrent, document %d: %v, want %v", self, nb, want[self])
				return
			}
			errs <- ""
		}()
	}
	for range queries {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	if _, _, err := idx.KNN(ctx, docs[0], k, Options{Pairs: pairs, Self: len(docs)}); err == nil {
		t.Error("a search from a document outside the index was accepted")
	}
}

// TestKNNFloor: lower bounds from elsewhere (Options.Floor) leave the
// result exact; with a document's neighbour list in Pairs and the list's
// radius as the floor of every other document, a search for fewer
// neighbours than the list holds solves and bounds nothing.
func TestKNNFloor(t *testing.T) {
	s, docs := randomSpace(t, 60, 200, 33)
	idx := s.NewIndex(docs)
	ctx := context.Background()
	const k, listed = 5, 9
	for self := range 20 {
		if docs[self].Empty() {
			continue
		}
		skip := func(i int) bool { return i == self }
		all, _, err := idx.Exhaustive(ctx, docs[self], len(docs), Options{Exclude: skip})
		if err != nil {
			t.Fatal(err)
		}
		exact := make([]float64, len(docs))
		for _, n := range all {
			exact[n.Doc] = n.Dist
		}
		loose := func(i int) float64 { return 0.9 * exact[i] }
		got, _, err := idx.KNN(ctx, docs[self], k, Options{Exclude: skip, Floor: loose})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, all[:k]) {
			t.Errorf("document %d, floors below WMD: %v, want %v", self, got, all[:k])
		}
		pairs, radius := &Pairs{}, all[listed-1].Dist
		floor := make([]float64, len(docs))
		for i := range floor {
			floor[i] = radius
		}
		for _, n := range all[:listed] {
			pairs.Put(self, n.Doc, n.Dist)
			floor[n.Doc] = 0
		}
		got, st, err := idx.KNN(ctx, docs[self], k, Options{Exclude: skip, Pairs: pairs, Self: self,
			Floor: func(i int) float64 { return floor[i] }})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, all[:k]) {
			t.Errorf("document %d, from its list: %v, want %v", self, got, all[:k])
		}
		if all[k-1].Dist < radius && (st.WMD > 0 || st.RWMD > 0) {
			t.Errorf("document %d, from its list: %d solves, %d bounds", self, st.WMD, st.RWMD)
		}
	}
}
