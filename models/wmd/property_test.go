package wmd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSolverProperty: on random degenerate problems (zero weights, integer
// ties, uniform weights, up to 60×60) the simplex agrees with successive
// shortest paths and the LP, returns a feasible plan, and SolveCutoff
// keeps its contract.
func TestSolverProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 1))
	var s, ssp Solver
	ssp.sspOnly = true
	for trial := 0; trial < 1000; trial++ {
		n, m := 1+r.IntN(25), 1+r.IntN(25)
		if trial%5 == 0 {
			n, m = 1+r.IntN(60), 1+r.IntN(60)
		}
		var a, b []float64
		switch trial % 4 {
		case 0:
			a, b = randomHist(r, n, true), randomHist(r, m, true)
		case 1:
			a, b = make([]float64, n), make([]float64, m)
			for i := range a {
				a[i] = 1 / float64(n)
			}
			for j := range b {
				b[j] = 1 / float64(m)
			}
		case 2:
			// integer counts, normalised
			a, b = make([]float64, n), make([]float64, m)
			var sa, sb float64
			for i := range a {
				a[i] = float64(r.IntN(3))
				sa += a[i]
			}
			for j := range b {
				b[j] = float64(r.IntN(3))
				sb += b[j]
			}
			if sa == 0 {
				a[0], sa = 1, 1
			}
			if sb == 0 {
				b[0], sb = 1, 1
			}
			for i := range a {
				a[i] /= sa
			}
			for j := range b {
				b[j] /= sb
			}
		default:
			a, b = randomHist(r, n, false), randomHist(r, m, false)
		}
		cost := randomCost(r, n*m, trial%2 == 0)
		got, err := s.Solve(a, b, cost)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, s.Flow(), a, b)
		want, _ := ssp.Solve(a, b, cost)
		if math.Abs(got-want) > 1e-9 {
			lp := lpEMD(t, a, b, cost)
			t.Fatalf("trial %d %dx%d: simplex %.15g ssp %.15g lp %.15g", trial, n, m, got, want, lp)
		}
		if trial%10 == 0 && n*m < 400 {
			lp := lpEMD(t, a, b, cost)
			if math.Abs(got-lp) > 1e-9 {
				t.Fatalf("trial %d: simplex %.15g lp %.15g", trial, got, lp)
			}
		}
		checkCutoff(t, &s, a, b, cost)
	}
}

func tiedSpace(t *testing.T, nw, nd, dim int, seed uint64, maxLen int) (*Space, []Doc) {
	r := rand.New(rand.NewPCG(seed, 9))
	words := make([]string, nw)
	data := make([]float64, nw*dim)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	for i := range data {
		data[i] = float64(r.IntN(3)) // ties galore, some duplicate vectors
	}
	s, docs := randomDocs(t, r, words, dim, data, nd, func() int { return r.IntN(maxLen + 1) })
	for d := range docs {
		if d%7 == 3 && d > 0 {
			docs[d] = docs[d-1] // identical documents
		}
	}
	return s, docs
}

// TestKNNProperty: on indexes with tied and duplicate word vectors,
// identical and empty documents, and k beyond the collection, pruned KNN
// (with and without the projection bound and the distance cache) equals
// Exhaustive, WCD and RWMD stay below WMD, and WMD is symmetric.
func TestKNNProperty(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		for _, dim := range []int{2, 5, 70} {
			s, docs := tiedSpace(t, 3+int(seed%20), 1+int(seed*7%150), dim, seed, 6)
			run := func(tag string) {
				idx := s.NewIndex(docs)
				for qi := 0; qi < min(len(docs), 8); qi++ {
					q := docs[qi]
					if q.Empty() {
						continue
					}
					for _, k := range []int{1, 3, 10, 500} {
						got, _, _ := knnMatchesExhaustive(t, idx, q, k, fmt.Sprintf("%s seed %d dim %d q %d", tag, seed, dim, qi))
						for _, nb := range got {
							d := docs[nb.Doc]
							if w := s.WCD(q, d); w > nb.Dist+1e-9 {
								t.Fatalf("WCD %v > WMD %v", w, nb.Dist)
							}
							if w := s.RWMD(q, d); w > nb.Dist+1e-9 {
								t.Fatalf("RWMD %v > WMD %v", w, nb.Dist)
							}
							back, _ := s.WMD(d, q)
							if math.Abs(back-nb.Dist) > 1e-9 {
								t.Fatalf("asymmetric %v %v", back, nb.Dist)
							}
						}
					}
				}
			}
			run("plain")
			withProjection(1, func() { run("proj") })
			old := maxCacheEntries
			maxCacheEntries = 0
			run("nocache")
			maxCacheEntries = old
		}
	}
}
