package wmd

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/semrank/semrank/models/embed"
)

// withProjection runs f with the projection bound on for vectors of any
// length, p directions.
func withProjection(p int, f func()) {
	dims, minDim := projDims, projMinDim
	projDims, projMinDim = p, 0
	defer func() { projDims, projMinDim = dims, minDim }()
	f()
}

// scaledSpace is randomSpace with dim dimensions and vectors scaled by
// scale, longer documents and words that share most of their direction
// (a low-rank part plus noise, as real word vectors are), so that few
// directions carry most of the variance.
func scaledSpace(t *testing.T, nw, nd, dim int, scale float64, seed uint64) (*Space, []Doc) {
	r := rand.New(rand.NewPCG(seed, 3))
	words := make([]string, nw)
	data := make([]float64, nw*dim)
	basis := make([]float64, 3*dim)
	for i := range basis {
		basis[i] = r.NormFloat64()
	}
	for w := range words {
		words[w] = fmt.Sprint("w", w)
		c := [3]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		for i := 0; i < dim; i++ {
			x := 0.1 * r.NormFloat64()
			for j := range c {
				x += c[j] * basis[j*dim+i]
			}
			data[w*dim+i] = scale * x
		}
	}
	return randomDocs(t, r, words, dim, data, nd, func() int { return 1 + r.IntN(15) })
}

// randomDocs returns the space of words' vectors (data, dim per word) and
// nd documents of words drawn uniformly, length() words each.
func randomDocs(t *testing.T, r *rand.Rand, words []string, dim int, data []float64, nd int, length func() int) (*Space, []Doc) {
	t.Helper()
	v, err := embed.NewVectors(words, dim, data)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSpace(v)
	docs := make([]Doc, nd)
	for d := range docs {
		toks := make([]string, length())
		for k := range toks {
			toks[k] = words[r.IntN(len(words))]
		}
		docs[d] = s.DocFromTokens(toks)
	}
	return s, docs
}

// TestProjectionBelowCosts: every projected distance is at most the cost
// matrix's entry plus the margin, for all words of the index against a
// query, at vector scales where rounding matters most in absolute terms;
// with p = dim, the projection is a rotation and the projected distances
// equal the full ones up to rounding, the margin's worst case.
func TestProjectionBelowCosts(t *testing.T) {
	for _, scale := range []float64{1e-3, 1, 1e3} {
		for _, c := range []struct{ dim, p int }{{8, 2}, {8, 8}, {30, 5}, {100, 16}} {
			withProjection(c.p, func() {
				s, docs := scaledSpace(t, 120, 80, c.dim, scale, uint64(c.dim+c.p))
				idx := s.NewIndex(docs)
				idx.Prepare()
				if idx.proj == nil {
					t.Fatalf("dim %d p %d: no projection", c.dim, c.p)
				}
				for qi := 0; qi < 5; qi++ {
					q := docs[qi]
					if q.Empty() {
						continue
					}
					sr := idx.begin(q)
					sr.useProjection(idx.proj)
					nq := len(q.Words)
					var tight float64
					for w := range idx.words {
						sr.fill(int32(w), -1)
						sr.pfill(int32(w), -1)
						for k := 0; k < nq; k++ {
							full, pd := sr.dist[w*sr.stride+k], sr.pdist[w*sr.stride+k]
							if pd > full+sr.margin {
								t.Fatalf("scale %g dim %d p %d: projected %v > full %v + margin %v", scale, c.dim, c.p, pd, full, sr.margin)
							}
							if full > 0 {
								tight = max(tight, pd/full)
							}
						}
					}
					if sr.margin > 1e-9*idx.proj.norm {
						t.Errorf("scale %g dim %d: margin %v is loose", scale, c.dim, sr.margin)
					}
					if c.p == c.dim && tight < 1-1e-9 {
						t.Errorf("a rotation shortened distances: %v", tight)
					}
					idx.end(sr)
				}
			})
		}
	}
}

// TestKNNWithProjection: with the projection bound on (few directions, a
// rotation, real-like vectors at several scales), pruned k-NN returns
// exhaustive search's neighbours and distances, and the projection
// bound does rule documents out.
func TestKNNWithProjection(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ dim, p int }{{5, 1}, {5, 5}, {20, 3}, {20, 8}, {60, 16}} {
		for _, scale := range []float64{1e-2, 1, 1e2} {
			withProjection(c.p, func() {
				s, docs := scaledSpace(t, 150, 400, c.dim, scale, uint64(7*c.dim+c.p))
				idx := s.NewIndex(docs)
				var st Stats
				for qi := 0; qi < 6; qi++ {
					q := docs[qi]
					if q.Empty() {
						continue
					}
					opt := Options{Exclude: func(i int) bool { return i == qi }}
					for _, k := range []int{1, 4, 15} {
						want, _, err := idx.Exhaustive(ctx, q, k, opt)
						if err != nil {
							t.Fatal(err)
						}
						got, s1, err := idx.KNN(ctx, q, k, opt)
						if err != nil {
							t.Fatal(err)
						}
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("dim %d p %d scale %g query %d k %d: pruned %v, exhaustive %v", c.dim, c.p, scale, qi, k, got, want)
						}
						st.Projected += s1.Projected
						st.RWMD += s1.RWMD
					}
				}
				if st.Projected == 0 || st.RWMD >= st.Projected {
					t.Errorf("dim %d p %d scale %g: projection bound ruled nothing out: %+v", c.dim, c.p, scale, st)
				}
			})
		}
	}
}

// TestSearchBoundMatchesDualBound: the dual bound over the distance
// cache's rows (one kernel call per pass) is dualBound's on the same
// costs, and the projected bound is below WMD.
func TestSearchBoundMatchesDualBound(t *testing.T) {
	withProjection(4, func() {
		s, docs := scaledSpace(t, 100, 60, 12, 1, 21)
		idx := s.NewIndex(docs)
		idx.Prepare()
		var d dualBound
		var sol Solver
		for qi := 0; qi < 5; qi++ {
			q := docs[qi]
			sr := idx.begin(q)
			sr.useProjection(idx.proj)
			for i, doc := range docs {
				if doc.Empty() {
					continue
				}
				got := sr.bound(i, math.Inf(1))
				want, _ := d.bound(doc.Weights, q.Weights, s.Costs(doc, q, nil), math.Inf(1))
				if math.Abs(got-want) > 1e-12*(1+want) {
					t.Fatalf("query %d doc %d: search bound %v, dualBound %v", qi, i, got, want)
				}
				w, err := sol.Solve(q.Weights, doc.Weights, s.Costs(q, doc, nil))
				if err != nil {
					t.Fatal(err)
				}
				// Both below WMD; neither is always the larger (the dual
				// bound is a heuristic step, not monotone in the costs).
				if pb := sr.pbound(i, math.Inf(1)); pb > w+1e-12 || got > w+1e-12 {
					t.Fatalf("query %d doc %d: projected %v, dual %v, WMD %v", qi, i, pb, got, w)
				}
			}
			idx.end(sr)
		}
	})
}

func TestSortByBound(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for trial := 0; trial < 100; trial++ {
		n := r.IntN(300)
		cs := make([]cand, n)
		for i := range cs {
			b := r.Float64() * math.Pow(10, float64(r.IntN(9)-4))
			switch r.IntN(8) {
			case 0:
				b = 0
			case 1:
				b = math.Copysign(0, -1)
			case 2:
				if i > 0 {
					b = cs[r.IntN(i)].bound // ties
				}
			}
			cs[i] = cand{doc: i, bound: b}
		}
		if trial%10 == 0 && n > 1 {
			cs[0].doc, cs[1].doc = cs[1].doc, cs[0].doc // not in document order
		}
		want := slices.Clone(cs)
		slices.SortFunc(want, func(a, b cand) int {
			if candLess(a, b) {
				return -1
			}
			if candLess(b, a) {
				return 1
			}
			return 0
		})
		got, _ := sortByBound(cs, nil)
		for i := range got {
			if got[i].doc != want[i].doc || got[i].bound != want[i].bound {
				t.Fatalf("trial %d: at %d got %+v, want %+v", trial, i, got[i], want[i])
			}
		}
	}
}

// TestKNNWithoutCache: past the distance cache's size, searches compute
// cost matrices directly (no projection, warm bounds on the matrices) and
// still return exhaustive search's neighbours.
func TestKNNWithoutCache(t *testing.T) {
	was := maxCacheEntries
	maxCacheEntries = 0
	defer func() { maxCacheEntries = was }()
	withProjection(4, func() {
		s, docs := scaledSpace(t, 100, 200, 12, 1, 5)
		idx := s.NewIndex(docs)
		ctx := context.Background()
		for qi := 0; qi < 5; qi++ {
			q := docs[qi]
			want, _, err := idx.Exhaustive(ctx, q, 5, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, st, err := idx.KNN(ctx, q, 5, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) || st.Projected != 0 {
				t.Fatalf("query %d: pruned %v (%+v), exhaustive %v", qi, got, st, want)
			}
		}
	})
}
