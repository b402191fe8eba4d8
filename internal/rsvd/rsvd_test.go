package rsvd

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// lowRank returns a d×n matrix of rank r plus Gaussian noise, as CSC and
// dense.
func lowRank(d, n, r int, noise float64, seed uint64) (CSC, *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 1))
	a, b := mat.NewDense(d, r, nil), mat.NewDense(r, n, nil)
	for _, m := range []*mat.Dense{a, b} {
		raw := m.RawMatrix().Data
		for i := range raw {
			raw[i] = rng.NormFloat64()
		}
	}
	var x mat.Dense
	x.Mul(a, b)
	c := CSC{Rows: d, Ptr: []int{0}}
	for j := range n {
		for i := range d {
			v := x.At(i, j) + noise*rng.NormFloat64()
			x.Set(i, j, v)
			c.Idx, c.Val = append(c.Idx, i), append(c.Val, v)
		}
		c.Ptr = append(c.Ptr, len(c.Idx))
	}
	return c, &x
}

func TestLeftMatchesExact(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noise   float64
		power   int
		tolVal  float64 // relative error of singular values
		tolVecs float64 // 1 − |cos| between singular vectors
	}{
		{"exact rank", 0, 1, 1e-9, 1e-9},
		{"noisy", 0.5, 3, 1e-3, 1e-2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const d, n, r, k = 60, 80, 8, 5
			c, x := lowRank(d, n, r, tc.noise, 7)
			var svd mat.SVD
			if !svd.Factorize(x, mat.SVDThinU) {
				t.Fatal("exact SVD failed")
			}
			var ue mat.Dense
			svd.UTo(&ue)
			se := svd.Values(nil)
			ur, sr, err := Left(c, k, 10, tc.power, 3)
			if err != nil {
				t.Fatal(err)
			}
			for i := range k {
				if rel := math.Abs(se[i]-sr[i]) / se[i]; rel > tc.tolVal {
					t.Errorf("σ%d: exact %g randomized %g (rel. error %g)", i, se[i], sr[i], rel)
				}
				if c := math.Abs(mat.Dot(ue.ColView(i), ur.ColView(i))); 1-c > tc.tolVecs {
					t.Errorf("u%d: |cos| between exact and randomized = %g", i, c)
				}
			}
		})
	}
}

func TestLeftRefuses(t *testing.T) {
	good, _ := lowRank(6, 5, 2, 0, 1)
	for _, tc := range []struct {
		name string
		x    CSC
		k    int
	}{
		{"k too large", good, 6},
		{"k zero", good, 0},
		{"no Ptr", CSC{Rows: 3}, 1},
		{"Ptr past Idx", CSC{Rows: 3, Ptr: []int{0, 2}, Idx: []int{0}, Val: []float64{1}}, 1},
		{"decreasing Ptr", CSC{Rows: 3, Ptr: []int{0, 1, 0, 1}, Idx: []int{0}, Val: []float64{1}}, 1},
		{"row out of range", CSC{Rows: 3, Ptr: []int{0, 1}, Idx: []int{3}, Val: []float64{1}}, 1},
		{"Val short", CSC{Rows: 3, Ptr: []int{0, 1}, Idx: []int{0}}, 1},
	} {
		if _, _, err := Left(tc.x, tc.k, 2, 1, 1); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestOrthonormal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := mat.NewDense(50, 6, nil)
	for i := range 50 {
		for j := range 6 {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	q := Orthonormal(a)
	var qtq mat.Dense
	qtq.Mul(q.T(), q)
	eye := mat.NewDiagDense(6, []float64{1, 1, 1, 1, 1, 1})
	if !mat.EqualApprox(&qtq, eye, 1e-12) {
		t.Errorf("QᵀQ ≠ I:\n%v", mat.Formatted(&qtq))
	}
}
