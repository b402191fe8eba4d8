package wmd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/semrank/semrank/models/embed"
)

// kernels runs f with the AVX kernels (where the processor has them) and
// with the Go versions.
func kernels(t *testing.T, f func(t *testing.T)) {
	for _, avx := range []bool{true, false} {
		t.Run(fmt.Sprintf("avx=%v", avx), func(t *testing.T) {
			was := useAVX(avx)
			defer useAVX(was)
			f(t)
		})
	}
}

func TestCostsMatchEuclid(t *testing.T) {
	kernels(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 5))
		for _, dim := range []int{1, 2, 3, 5, 8, 17, 100} {
			nw := 50
			words := make([]string, nw)
			data := make([]float64, nw*dim)
			for i := range words {
				words[i] = fmt.Sprint("w", i)
			}
			for i := range data {
				data[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(5)-2))
			}
			v, err := embed.NewVectors(words, dim, data)
			if err != nil {
				t.Fatal(err)
			}
			s := NewSpace(v)
			for trial := 0; trial < 20; trial++ {
				ta, tb := make([]string, 1+r.IntN(40)), make([]string, 1+r.IntN(40))
				for k := range ta {
					ta[k] = words[r.IntN(nw)]
				}
				for k := range tb {
					tb[k] = words[r.IntN(nw)]
				}
				a, b := s.DocFromTokens(ta), s.DocFromTokens(tb)
				c := s.Costs(a, b, nil)
				ct := s.Costs(b, a, nil)
				// The index's WCD (one kernel call for all centroids) is
				// Space.WCD, bit for bit.
				x := s.NewIndex([]Doc{b, a})
				x.centsOnce.Do(x.centroids)
				if w := x.cents.into(nil, a.Centroid, nil); w[0] != s.WCD(a, b) || w[1] != s.WCD(a, a) {
					t.Fatalf("dim %d: index WCD %v, Space.WCD %v %v", dim, w[:2], s.WCD(a, b), s.WCD(a, a))
				}
				for i, wi := range a.Words {
					for j, wj := range b.Words {
						want := euclid(v.Vector(int(wi)), v.Vector(int(wj)))
						if wi == wj {
							want = 0
						}
						// Bit for bit, but for the FMA kernel's own rounding.
						tol := 0.0
						if hasFMA {
							tol = 4e-16 * float64(dim) * want
						}
						if got := c[i*len(b.Words)+j]; math.Abs(got-want) > tol || (want == 0) != (got == 0) {
							t.Fatalf("dim %d: cost(%d, %d) = %v, euclid %v", dim, wi, wj, got, want)
						}
						if got, wd := c[i*len(b.Words)+j], s.WordDistance(wi, wj); got != wd {
							t.Fatalf("dim %d: cost(%d, %d) = %v, WordDistance %v", dim, wi, wj, got, wd)
						}
						// Symmetric, bit for bit.
						if ct[j*len(a.Words)+i] != c[i*len(b.Words)+j] {
							t.Fatalf("dim %d: Costs(b, a) differs from Costs(a, b)", dim)
						}
					}
				}
			}
		}
	})
}

func TestMinKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	type result struct {
		min, md, mdc, mac float64
		arg               int
		cm1, cm2          []float64
	}
	run := func(row, v, cm []float64, ui float64) result {
		cm1 := append([]float64(nil), cm...)
		cm2 := append([]float64(nil), cm...)
		res := result{min: minOf(row), md: minDiff(row, v), mdc: minDiffCols(row, v, cm1, ui), mac: minAndCols(row, cm2), cm1: cm1, cm2: cm2}
		if len(row) > 0 {
			res.arg = argMin(row)
		}
		return res
	}
	for n := 0; n <= 41; n++ {
		row, v, cm := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range row {
			row[i], v[i], cm[i] = r.Float64(), r.Float64(), r.Float64()
			if r.IntN(5) == 0 {
				row[i] = row[r.IntN(i+1)] // ties
			}
		}
		ui := r.Float64() - 0.5
		was := useAVX(true)
		a := run(row, v, cm, ui)
		useAVX(false)
		g := run(row, v, cm, ui)
		useAVX(was)
		if a.min != g.min || a.md != g.md || a.mdc != g.mdc || a.mac != g.mac || a.arg != g.arg {
			t.Fatalf("n %d: kernels %+v, Go %+v", n, a, g)
		}
		for j := range cm {
			if a.cm1[j] != g.cm1[j] || a.cm2[j] != g.cm2[j] {
				t.Fatalf("n %d: column minima differ at %d", n, j)
			}
		}
		want := math.Inf(1)
		for _, x := range row {
			want = min(want, x)
		}
		if g.min != want || (n > 0 && row[g.arg] != want) {
			t.Fatalf("n %d: min %v at %d, want %v", n, g.min, g.arg, want)
		}
		for j := 0; j < g.arg; j++ {
			if row[j] == want {
				t.Fatalf("n %d: argMin %d is not the first minimum (%d)", n, g.arg, j)
			}
		}
	}
}

// TestRowKernels: the whole-document kernels of the dual bounds give the
// Go versions' values, and those match their definitions.
func TestRowKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	inf := math.Inf(1)
	for trial := 0; trial < 200; trial++ {
		nq := 1 + r.IntN(30)
		stride := (nq + 3) &^ 3
		nw := 1 + r.IntN(40)
		base := make([]float64, nw*stride)
		for w := 0; w < nw; w++ {
			for k := 0; k < stride; k++ {
				base[w*stride+k] = inf
				if k < nq {
					base[w*stride+k] = r.Float64()
					if r.IntN(6) == 0 {
						base[w*stride+k] = 0
					}
				}
			}
		}
		ids := make([]int32, 1+r.IntN(nw))
		for i := range ids {
			ids[i] = int32(r.IntN(nw))
		}
		sub := make([]float64, stride)
		rsub := make([]float64, len(ids))
		for k := range sub {
			sub[k] = math.Inf(-1)
			if k < nq {
				sub[k] = r.Float64() - 0.5
			}
		}
		for i := range rsub {
			rsub[i] = r.Float64()
		}
		type out struct{ r1, c1, r2, c2, r3, c3 []float64 }
		run := func() out {
			o := out{make([]float64, len(ids)), make([]float64, stride), make([]float64, len(ids)), make([]float64, stride), make([]float64, len(ids)), make([]float64, stride)}
			rowColMin(base, stride, ids, o.r1, o.c1)
			rowsDual(base, stride, ids, sub, rsub, o.r2, o.c2)
			rowsDual(base, stride, ids, sub, nil, o.r3, o.c3)
			return o
		}
		was := useAVX(true)
		a := run()
		useAVX(false)
		g := run()
		useAVX(was)
		if !reflect.DeepEqual(a, g) {
			t.Fatalf("trial %d: kernels %v, Go %v", trial, a, g)
		}
		// The Go versions against their definitions.
		for i, w := range ids {
			row := base[int(w)*stride : int(w)*stride+nq]
			lo, ld := inf, inf
			for k, c := range row {
				lo = min(lo, c)
				ld = min(ld, c-sub[k])
			}
			if g.r1[i] != lo || g.r2[i] != ld || g.r3[i] != ld {
				t.Fatalf("trial %d row %d: minima %v %v %v, want %v %v", trial, i, g.r1[i], g.r2[i], g.r3[i], lo, ld)
			}
		}
		for k := 0; k < nq; k++ {
			lo, l2, l3 := inf, inf, inf
			for i, w := range ids {
				c := base[int(w)*stride+k]
				lo, l2, l3 = min(lo, c), min(l2, c-rsub[i]), min(l3, c-g.r3[i])
			}
			if g.c1[k] != lo || g.c2[k] != l2 || g.c3[k] != l3 {
				t.Fatalf("trial %d column %d: %v %v %v, want %v %v %v", trial, k, g.c1[k], g.c2[k], g.c3[k], lo, l2, l3)
			}
		}
	}
}
