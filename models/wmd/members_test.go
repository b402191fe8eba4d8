package wmd

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkMembers checks Members(q, k) against Exhaustive: the same set;
// each bracket holding the exhaustive distance, and an exact one equal to
// it bit for bit; and Rank ordering the brackets as Exhaustive orders its
// neighbours.
func checkMembers(t *testing.T, idx *Index, q Doc, k int, what string) Stats {
	t.Helper()
	ctx := context.Background()
	want, _, err := idx.Exhaustive(ctx, q, k, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, st, err := idx.Members(ctx, q, k, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s, k %d: %d members, want %d (%v, %v)", what, k, len(got), len(want), got, want)
	}
	exact := map[int]float64{}
	for _, n := range want {
		exact[n.Doc] = n.Dist
	}
	for i, b := range got {
		d, ok := exact[b.Doc]
		switch {
		case !ok:
			t.Fatalf("%s, k %d: member %d is not among %v", what, k, b.Doc, want)
		case i > 0 && got[i-1].Doc >= b.Doc:
			t.Fatalf("%s, k %d: members not in document order: %v", what, k, got)
		case b.Exact && (b.Lo != d || b.Hi != d):
			t.Fatalf("%s, k %d: member %d exact %.17g, exhaustive %.17g", what, k, b.Doc, b.Lo, d)
		case b.Lo > d+1e-9*(1+d) || b.Hi < d-1e-9*(1+d):
			t.Fatalf("%s, k %d: member %d in [%.17g, %.17g], distance %.17g", what, k, b.Doc, b.Lo, b.Hi, d)
		}
	}
	// Rank solves what it needs as Space.WMD does: from the query's side
	// here, so the query must be a document of the index for it; the
	// order test is in TestMembersPairs.
	return st
}

// TestMembers: on random indexes, and on indexes with tied and duplicate
// word vectors, identical and empty documents and k beyond the
// collection, Members returns Exhaustive's set, with and without the
// distance cache and the projection bound.
func TestMembers(t *testing.T) {
	s, docs := randomSpace(t, 60, 300, 4)
	idx := s.NewIndex(docs)
	var st Stats
	for qi := range 10 {
		for _, k := range []int{1, 2, 5, 20} {
			add(&st, checkMembers(t, idx, docs[qi], k, fmt.Sprintf("query %d", qi)))
		}
	}
	if st.Bracketed == 0 {
		t.Errorf("no member proved without its exact distance: %+v", st)
	}
	for seed := uint64(0); seed < 12; seed++ {
		for _, dim := range []int{2, 5, 70} {
			s, docs := tiedSpace(t, 3+int(seed%20), 1+int(seed*7%150), dim, seed, 6)
			run := func(tag string) {
				idx := s.NewIndex(docs)
				for qi := range min(len(docs), 6) {
					if docs[qi].Empty() {
						continue
					}
					for _, k := range []int{1, 3, 10, 500} {
						checkMembers(t, idx, docs[qi], k, fmt.Sprintf("%s seed %d dim %d q %d", tag, seed, dim, qi))
					}
				}
			}
			eachSearchPath(run)
		}
	}
}

func add(st *Stats, o Stats) {
	st.WMD += o.WMD
	st.Settled += o.Settled
	st.Bracketed += o.Bracketed
}

// TestMembersPairs: searches from an index's own documents sharing Pairs,
// in any order and concurrently, interleaved with KNN searches sharing
// them too, return each document's k nearest as a set, and Rank orders
// any subset of it as the nearest are ordered, bit for bit the distances
// it solves.
func TestMembersPairs(t *testing.T) {
	for _, tc := range []struct {
		name          string
		nw, nd, k, qs int
		tied          bool
	}{
		{"random", 60, 150, 5, 40, false},
		{"k 1", 60, 80, 1, 30, false},
		{"k 10", 40, 120, 10, 30, false},
		{"tied", 8, 90, 4, 30, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, docs := randomSpace(t, tc.nw, tc.nd, 21)
			if tc.tied {
				s, docs = tiedSpace(t, tc.nw, tc.nd, 3, 5, 5)
			}
			idx := s.NewIndex(docs)
			want := make([][]Neighbor, tc.qs)
			for self := range want {
				if !docs[self].Empty() {
					want[self] = nearestByWMD(t, s, docs, self, tc.k)
				}
			}
			check := func(what string, self int, got []Bracket, pairs *Pairs) {
				t.Helper()
				docsOf := func(nb []Neighbor) []int {
					var out []int
					for _, n := range nb {
						out = append(out, n.Doc)
					}
					return out
				}
				var set []int
				for _, b := range got {
					set = append(set, b.Doc)
				}
				if w := slices.Sorted(slices.Values(docsOf(want[self]))); !slices.Equal(set, w) {
					t.Fatalf("%s, document %d: members %v, want %v", what, self, set, w)
				}
				// Every other member left out, as a graph leaves out
				// documents it holds already.
				sub := slices.DeleteFunc(slices.Clone(got), func(b Bracket) bool { return b.Doc%2 == self%2 })
				if err := idx.Rank(self, sub, pairs); err != nil {
					t.Fatal(err)
				}
				w := slices.DeleteFunc(slices.Clone(want[self]), func(n Neighbor) bool { return n.Doc%2 == self%2 })
				for i, b := range sub {
					if b.Doc != w[i].Doc || (b.Exact && b.Lo != w[i].Dist) {
						t.Fatalf("%s, document %d: ranked %v, want %v", what, self, sub, w)
					}
				}
			}
			search := func(self int, pairs *Pairs, knn bool) []Bracket {
				o := Options{Exclude: func(i int) bool { return i == self }, Pairs: pairs, Self: self}
				if knn {
					nb, _, err := idx.KNN(context.Background(), docs[self], tc.k, o)
					if err != nil {
						t.Fatal(err)
					}
					var bs []Bracket
					for _, n := range nb {
						bs = append(bs, Bracket{n.Doc, n.Dist, n.Dist, true})
					}
					slices.SortFunc(bs, func(a, b Bracket) int { return a.Doc - b.Doc })
					return bs
				}
				bs, _, err := idx.Members(context.Background(), docs[self], tc.k, o)
				if err != nil {
					t.Fatal(err)
				}
				return bs
			}
			for _, order := range []string{"forward", "backward"} {
				pairs := &Pairs{}
				for i := range tc.qs {
					self := i
					if order == "backward" {
						self = tc.qs - 1 - i
					}
					if docs[self].Empty() {
						continue
					}
					check(order, self, search(self, pairs, i%3 == 2), pairs)
				}
			}
			pairs := &Pairs{}
			errs := make(chan []Bracket, tc.qs)
			for self := range tc.qs {
				go func() {
					if docs[self].Empty() {
						errs <- nil
						return
					}
					errs <- search(self, pairs, false)
				}()
			}
			got := map[int][]Bracket{}
			for range tc.qs {
				<-errs
			}
			// The concurrent searches filled pairs; the sets are checked
			// again, now reading what they shared.
			for self := range tc.qs {
				if !docs[self].Empty() {
					got[self] = search(self, pairs, false)
					check("after concurrent", self, got[self], pairs)
				}
			}
		})
	}
}

// nearestByWMD returns document self's k nearest other documents by
// Space.WMD with the lower-numbered document's words as rows, as searches
// sharing Pairs solve them, nearest first, ties by document.
func nearestByWMD(t *testing.T, s *Space, docs []Doc, self, k int) []Neighbor {
	t.Helper()
	var all []Neighbor
	for d := range docs {
		if d == self || docs[d].Empty() {
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
	return all[:min(k, len(all))]
}

// FuzzMembers: on random spaces with tied word vectors and duplicate and
// empty documents, Members' set is Exhaustive's.
func FuzzMembers(f *testing.F) {
	for _, seed := range []uint64{0, 1, 7, 42} {
		f.Add(seed, uint8(20), uint8(3), uint8(3))
	}
	f.Fuzz(func(t *testing.T, seed uint64, nd, dim, k uint8) {
		s, docs := tiedSpace(t, 3+int(seed%17), 1+int(nd)%120, 1+int(dim)%8, seed, 6)
		idx := s.NewIndex(docs)
		for qi := range min(len(docs), 4) {
			if !docs[qi].Empty() {
				checkMembers(t, idx, docs[qi], 1+int(k)%12, fmt.Sprintf("seed %d q %d", seed, qi))
			}
		}
	})
}

// TestSolveWithin: a solve stopped Below returns a plan's cost, below
// settle and above the optimum; going on from its basis gives Solve's
// optimum bit for bit; and settle never changes an exact result.
func TestSolveWithin(t *testing.T) {
	var s Solver
	var b basis
	below := 0
	for trial := range 300 {
		r := rand.New(rand.NewPCG(uint64(trial), 3))
		n, m := 1+r.IntN(30), 1+r.IntN(30)
		a, bb := randomHist(r, n, trial%3 == 0), randomHist(r, m, trial%4 == 0)
		cost := randomCost(r, n*m, trial%2 == 0)
		opt, err := s.Solve(a, bb, cost)
		if err != nil {
			t.Fatal(err)
		}
		span := math.Abs(opt) + 1
		for _, f := range []float64{1.001, 1.01, 1.1, 1.5} {
			settle := opt + (f-1)*span
			d, how, err := s.SolveWithin(a, bb, cost, math.Inf(1), settle)
			if err != nil {
				t.Fatal(err)
			}
			switch how {
			case Exact:
				if d != opt {
					t.Fatalf("trial %d settle %g: exact %.17g, Solve %.17g", trial, settle, d, opt)
				}
				continue
			case Above:
				t.Fatalf("trial %d: Above without a cutoff", trial)
			}
			below++
			if !(d < settle) || d < opt-1e-12*span {
				t.Fatalf("trial %d settle %g: stopped at %.17g, optimum %.17g", trial, settle, d, opt)
			}
			s.sx.save(&b)
			got, how, err := s.solveFrom(&b, a, bb, cost, math.Inf(1), math.Inf(-1))
			if err != nil || how != Exact || got != opt {
				t.Fatalf("trial %d: went on to %.17g (%d, %v), Solve %.17g", trial, got, how, err, opt)
			}
		}
		if d, how, _ := s.SolveWithin(a, bb, cost, math.Inf(1), opt-1e-9*span); how != Exact || d != opt {
			t.Fatalf("trial %d: settle below the optimum: %.17g (%d), Solve %.17g", trial, d, how, opt)
		}
	}
	if below == 0 {
		t.Error("no solve stopped Below")
	}
}
