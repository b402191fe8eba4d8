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
		want := make([]float64, k)
		for i, term := range f.Idx {
			for j := range want {
				want[j] += f.Val[i] * data[term*k+j]
			}
		}
		got := Project(proj, f)
		for j := range want {
			if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
				t.Fatalf("k=%d: Project[%d] = %v, summed one at a time %v", k, j, got[j], want[j])
			}
		}
	}
}

// BenchmarkProject projects 40-term queries through a 50,000×200 matrix,
// as a query's concept vector is.
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
	q := 0
	for b.Loop() {
		Project(proj, fs[q%len(fs)])
		q++
	}
}
