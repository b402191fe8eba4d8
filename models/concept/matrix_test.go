package concept

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestProjectAxpy: Project's vectorized rows give, to the bit, the
// projection summed one element at a time, for rows of every length
// around the vector width (tails included) and signed, scaled values.
func TestProjectAxpy(t *testing.T) {
	const d = 300 // terms
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{1, 2, 3, 7, 8, 9, 50, 200, 201} {
		proj := mat.NewDense(d, k, nil)
		data := proj.RawMatrix().Data
		for i := range data {
			data[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4))
		}
		var f Sparse
		for i := 0; i < 60; i++ {
			f.Idx = append(f.Idx, r.IntN(d))
			f.Val = append(f.Val, r.NormFloat64()*float64(1+r.IntN(5)))
		}
		want := projectScalar(proj, f)
		got := Project(proj, f)
		for j := range want {
			if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
				t.Fatalf("k=%d: Project[%d] = %v, summed one at a time %v", k, j, got[j], want[j])
			}
		}
	}
}

// projectScalar is Project summed one element at a time, the reference
// its vectorized rows must match.
func projectScalar(proj *mat.Dense, f Sparse) []float64 {
	raw := proj.RawMatrix()
	g := make([]float64, raw.Cols)
	for i, t := range f.Idx {
		for j, a := range raw.Data[t*raw.Stride : t*raw.Stride+raw.Cols] {
			g[j] += f.Val[i] * a
		}
	}
	return g
}

// BenchmarkProject projects 40-term queries through a 50,000×200 matrix,
// as a query's concept vector is: one element at a time, and by Project.
func BenchmarkProject(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	d, k := 50000, 200
	data := make([]float64, d*k)
	for i := range data {
		data[i] = r.NormFloat64()
	}
	proj := mat.NewDense(d, k, data)
	fs := make([]Sparse, 50)
	for q := range fs {
		for range 40 {
			fs[q].Idx = append(fs[q].Idx, r.IntN(d))
			fs[q].Val = append(fs[q].Val, r.Float64())
		}
	}
	for _, bc := range []struct {
		name    string
		project func(*mat.Dense, Sparse) []float64
	}{{"scalar", projectScalar}, {"axpy", Project}} {
		b.Run(bc.name, func(b *testing.B) {
			q := 0
			for b.Loop() {
				bc.project(proj, fs[q%len(fs)])
				q++
			}
		})
	}
}
