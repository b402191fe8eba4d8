package wmd

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestSimplexSmallCases: table of degenerate and edge cases, each checked
// against the LP and for a feasible plan.
func TestSimplexSmallCases(t *testing.T) {
	tests := []struct {
		name       string
		a, b, cost []float64
		want       float64
	}{
		{"one word each side", []float64{1}, []float64{1}, []float64{0.7}, 0.7},
		{"one word each side, zero cost", []float64{1}, []float64{1}, []float64{0}, 0},
		{"one row", []float64{1}, []float64{0.25, 0.25, 0.5}, []float64{1, 2, 3}, 2.25},
		{"one column", []float64{0.5, 0.5}, []float64{1}, []float64{1, 3}, 2},
		{"all costs zero", []float64{0.5, 0.5}, []float64{0.2, 0.3, 0.5}, make([]float64, 6), 0},
		{"all costs equal", []float64{0.25, 0.75}, []float64{0.5, 0.5}, []float64{2, 2, 2, 2}, 2},
		{"identity, uniform", []float64{1. / 3, 1. / 3, 1. / 3}, []float64{1. / 3, 1. / 3, 1. / 3},
			[]float64{0, 1, 1, 1, 0, 1, 1, 1, 0}, 0},
		{"permutation", []float64{0.5, 0.5}, []float64{0.5, 0.5}, []float64{5, 1, 1, 5}, 1},
		{"degenerate partial sums", []float64{0.5, 0.5}, []float64{0.25, 0.25, 0.5},
			[]float64{1, 1, 2, 2, 2, 1}, 1},
		{"zero-weight bins", []float64{0, 1, 0}, []float64{0.5, 0, 0.5},
			[]float64{9, 9, 9, 1, 9, 2, 9, 9, 9}, 1.5},
		{"negative costs", []float64{0.5, 0.5}, []float64{0.5, 0.5}, []float64{-1, 0, 0, -1}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s Solver
			got, err := s.Solve(tc.a, tc.b, tc.cost)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("EMD = %.15g, want %.15g", got, tc.want)
			}
			if lp := lpEMD(t, tc.a, tc.b, tc.cost); math.Abs(got-lp) > 1e-9 {
				t.Errorf("EMD = %.15g, LP %.15g", got, lp)
			}
			if !s.byPivots {
				t.Error("the simplex fell back to successive shortest paths")
			}
			checkPlan(t, s.Flow(), tc.a, tc.b)
		})
	}
}

// checkCutoff checks SolveCutoff against Solve on one problem, for
// cutoffs below, at and above the optimum: an early stop must return a
// bound above the cutoff and not above the optimum, and a full solve the
// optimum bit for bit.
func checkCutoff(t *testing.T, s *Solver, a, b, cost []float64) {
	t.Helper()
	opt, err := s.Solve(a, b, cost)
	if err != nil {
		t.Fatal(err)
	}
	span := math.Abs(opt) + 1
	for _, f := range []float64{-1, 0.5, 0.9, 0.99, 1, 1.01, 1.5} {
		cutoff := opt - (1-f)*span
		if f == -1 {
			cutoff = math.Inf(-1)
		}
		d, exact, err := s.SolveCutoff(a, b, cost, cutoff)
		if err != nil {
			t.Fatal(err)
		}
		if exact {
			if d != opt {
				t.Fatalf("cutoff %g: exact %.17g, Solve %.17g", cutoff, d, opt)
			}
			continue
		}
		if !(d > cutoff) || d > opt+1e-12*span {
			t.Fatalf("cutoff %g: stopped with bound %.17g, optimum %.17g", cutoff, d, opt)
		}
	}
	if d, exact, _ := s.SolveCutoff(a, b, cost, math.Inf(1)); !exact || d != opt {
		t.Fatalf("cutoff +Inf: %v %v, Solve %v", d, exact, opt)
	}
}

func TestSolveCutoff(t *testing.T) {
	var s Solver
	r := rand.New(rand.NewPCG(8, 8))
	for trial := 0; trial < 300; trial++ {
		n, m := 1+r.IntN(30), 1+r.IntN(30)
		a, b := randomHist(r, n, trial%3 == 0), randomHist(r, m, trial%4 == 0)
		cost := randomCost(r, n*m, trial%2 == 0)
		checkCutoff(t, &s, a, b, cost)
	}
	for _, p := range loadPOTPairs(t) {
		checkCutoff(t, &s, p.A, p.B, p.Cost)
	}
}

func TestDualBound(t *testing.T) {
	var d dualBound
	var s Solver
	r := rand.New(rand.NewPCG(9, 9))
	check := func(a, b, cost []float64) {
		t.Helper()
		w, err := s.Solve(a, b, cost)
		if err != nil {
			t.Fatal(err)
		}
		lb, rw := d.bound(a, b, cost, math.Inf(1))
		if want := rwmd(a, b, cost); rw != want {
			t.Fatalf("RWMD part %v, rwmd %v", rw, want)
		}
		if lb < rw || lb > w+1e-12 {
			t.Fatalf("dual bound %v outside [RWMD %v, WMD %v]", lb, rw, w)
		}
		// Transposed, the bound is the same.
		n, m := len(a), len(b)
		ct := make([]float64, n*m)
		for i := 0; i < n; i++ {
			for j := 0; j < m; j++ {
				ct[j*n+i] = cost[i*m+j]
			}
		}
		if lt, _ := d.bound(b, a, ct, math.Inf(1)); lt != lb {
			t.Fatalf("transposed bound %v, bound %v", lt, lb)
		}
		// Warm: any u gives a lower bound; the solver's own optimal
		// query potentials give WMD itself (strong duality).
		u := make([]float64, len(a))
		for i := range u {
			u[i] = r.Float64() - 0.5
		}
		if lw := d.warm(a, b, cost, u); lw > w+1e-12 {
			t.Fatalf("warm bound %v above WMD %v", lw, w)
		}
		if s.byPivots {
			if lw := d.warm(a, b, cost, s.sx.pi[:len(a)]); math.Abs(lw-w) > 1e-9 {
				t.Fatalf("warm bound from the optimal potentials %v, WMD %v", lw, w)
			}
		}
		// Below RWMD, the second pass is skipped.
		if lb2, rw2 := d.bound(a, b, cost, rw/2-1); rw2 != rw || lb2 != rw {
			t.Fatalf("early return %v %v, want RWMD %v", lb2, rw2, rw)
		}
	}
	for trial := 0; trial < 300; trial++ {
		n, m := 1+r.IntN(25), 1+r.IntN(25)
		a, b := randomHist(r, n, trial%3 == 0), randomHist(r, m, false)
		cost := make([]float64, n*m)
		for i := range cost {
			cost[i] = r.Float64()
		}
		check(a, b, cost)
	}
	tighter := 0
	for _, p := range loadPOTPairs(t) {
		check(p.A, p.B, p.Cost)
		if lb, rw := d.bound(p.A, p.B, p.Cost, math.Inf(1)); lb > rw {
			tighter++
		}
	}
	if tighter == 0 {
		t.Error("the dual bound never improved on RWMD on the real pairs")
	}
}

// TestKNNWithCutoffsMatchesExhaustive: larger collections of longer
// documents than TestKNNMatchesExhaustive, so that the solver's early
// stops and the dual bound both prune, with Exclude and Prefetch.
func TestKNNWithCutoffsMatchesExhaustive(t *testing.T) {
	s, docs := randomSpace(t, 200, 600, 11)
	// Longer documents: join random pairs of the random ones.
	r := rand.New(rand.NewPCG(12, 12))
	for i := range docs {
		var toks []string
		for k := 0; k < 5+r.IntN(20); k++ {
			toks = append(toks, s.vec.Words[r.IntN(200)])
		}
		docs[i] = s.DocFromTokens(toks)
	}
	idx := s.NewIndex(docs)
	ctx := context.Background()
	var st Stats
	for qi := 0; qi < 8; qi++ {
		q := docs[qi]
		opt := Options{Exclude: func(i int) bool { return i == qi }}
		for _, k := range []int{1, 3, 10} {
			want, _, err := idx.Exhaustive(ctx, q, k, opt)
			if err != nil {
				t.Fatal(err)
			}
			got, s1, err := idx.KNN(ctx, q, k, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("query %d, k %d: pruned %v, exhaustive %v", qi, k, got, want)
			}
			st.RWMD += s1.RWMD
			st.WMD += s1.WMD
			st.Abandoned += s1.Abandoned
		}
		// Prefetch: exact over the prefetched documents.
		pre, _, err := idx.KNN(ctx, q, 5, Options{Prefetch: 50})
		if err != nil || len(pre) != 5 {
			t.Fatalf("prefetch: %v, %v", pre, err)
		}
	}
	if st.Abandoned == 0 || st.WMD >= 8*3*len(docs) {
		t.Errorf("no pruning: %+v", st)
	}
}

func TestSolveAllocates(t *testing.T) {
	p := loadPOTPairs(t)[0]
	var s Solver
	s.Solve(p.A, p.B, p.Cost)
	if n := testing.AllocsPerRun(20, func() { s.Solve(p.A, p.B, p.Cost) }); n != 0 {
		t.Errorf("Solve allocates %v times per call", n)
	}
	if raceEnabled {
		return
	}
	s2, docs := randomSpace(t, 60, 100, 13)
	idx := s2.NewIndex(docs)
	idx.KNN(context.Background(), docs[0], 5, Options{})
	if n := testing.AllocsPerRun(20, func() { idx.KNN(context.Background(), docs[1], 5, Options{}) }); n > 5 {
		t.Errorf("KNN allocates %v times per search", n)
	}
}

// TestKNNConcurrent: searches of one index from several goroutines (run
// with -race) give the sequential answers.
func TestKNNConcurrent(t *testing.T) {
	s, docs := randomSpace(t, 80, 200, 14)
	idx := s.NewIndex(docs)
	ctx := context.Background()
	want := make([][]Neighbor, 16)
	for q := range want {
		want[q], _, _ = idx.KNN(ctx, docs[q], 4, Options{})
	}
	errs := make(chan string, len(want))
	for q := range want {
		go func() {
			got, _, err := idx.KNN(ctx, docs[q], 4, Options{})
			if w, _ := s.WMD(docs[q], docs[got[0].Doc]); err != nil || !reflect.DeepEqual(got, want[q]) || w != got[0].Dist {
				errs <- fmt.Sprintf("query %d: %v (%v), want %v", q, got, err, want[q])
				return
			}
			errs <- ""
		}()
	}
	for range want {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

func BenchmarkKNN(b *testing.B) {
	r := rand.New(rand.NewPCG(15, 15))
	s, _ := randomSpace(b, 2000, 1, 15)
	docs := make([]Doc, 1000)
	for i := range docs {
		toks := make([]string, 5+r.IntN(25))
		for k := range toks {
			toks[k] = s.vec.Words[r.IntN(2000)]
		}
		docs[i] = s.DocFromTokens(toks)
	}
	idx := s.NewIndex(docs)
	ctx := context.Background()
	for _, mode := range []string{"pruned", "exhaustive"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				for q := 0; q < 10; q++ {
					if mode == "pruned" {
						idx.KNN(ctx, docs[q], 10, Options{})
					} else {
						idx.Exhaustive(ctx, docs[q], 10, Options{})
					}
				}
			}
		})
	}
}

// randomCost returns n costs, uniform in [0, 1) or, with ties, integers
// from 0 to 2.
func randomCost(r *rand.Rand, n int, ties bool) []float64 {
	cost := make([]float64, n)
	for i := range cost {
		if ties {
			cost[i] = float64(r.IntN(3))
		} else {
			cost[i] = r.Float64()
		}
	}
	return cost
}
