// Package rsvd computes the leading singular vectors and values of large
// sparse matrices by randomized subspace iteration (Halko, Martinsson &
// Tropp, 2011, Alg. 4.4): a sketch of k + over random columns multiplied
// through the matrix and its transpose power + 1 times, each product
// re-orthonormalised, then an exact SVD of the small projected matrix.
// LSA's term–document matrices and the word–context PPMI matrices of
// count-based word vectors are both too large for a dense SVD and need
// only their leading k directions.
package rsvd

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// CSC is a sparse Rows×(len(Ptr)−1) matrix in compressed sparse column
// form: column j's row indices are Idx[Ptr[j]:Ptr[j+1]] and its values
// Val[Ptr[j]:Ptr[j+1]].
type CSC struct {
	Rows int
	Ptr  []int
	Idx  []int
	Val  []float64
}

// Cols returns the number of columns.
func (x CSC) Cols() int { return max(len(x.Ptr)-1, 0) }

func (x CSC) check() error {
	n := x.Cols()
	if x.Rows < 0 || len(x.Ptr) == 0 || x.Ptr[0] != 0 || x.Ptr[n] != len(x.Idx) || len(x.Idx) != len(x.Val) {
		return errors.New("rsvd: malformed CSC matrix")
	}
	for j := range n {
		if x.Ptr[j] > x.Ptr[j+1] {
			return fmt.Errorf("rsvd: column %d ends before it starts", j)
		}
	}
	for _, i := range x.Idx {
		if i < 0 || i >= x.Rows {
			return fmt.Errorf("rsvd: row index %d out of 0..%d", i, x.Rows-1)
		}
	}
	return nil
}

// Left returns approximations of the k leading left singular vectors of x
// (as the columns of a Rows×k matrix) and of its k largest singular
// values, from a sketch of k+over columns and power subspace iterations
// seeded by seed. k must not exceed either dimension of x.
func Left(x CSC, k, over, power int, seed uint64) (*mat.Dense, []float64, error) {
	if err := x.check(); err != nil {
		return nil, nil, err
	}
	d, n := x.Rows, x.Cols()
	if k < 1 || k > min(d, n) || over < 0 || power < 0 {
		return nil, nil, fmt.Errorf("rsvd: %d singular vectors of a %d×%d matrix (oversampling %d, %d iterations)", k, d, n, over, power)
	}
	l := min(k+over, min(d, n))
	rng := rand.New(rand.NewPCG(seed, 0x15a))
	omega := mat.NewDense(n, l, nil)
	raw := omega.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	q := Orthonormal(x.mul(omega)) // d×l
	for range power {
		z := Orthonormal(x.mulT(q)) // n×l
		q = Orthonormal(x.mul(z))
	}
	bt := x.mulT(q) // n×l = (QᵀX)ᵀ
	var svd mat.SVD
	if !svd.Factorize(bt, mat.SVDThin) {
		return nil, nil, errors.New("rsvd: SVD of the sketch did not converge")
	}
	// Bᵀ = U' Σ V'ᵀ, so B = V' Σ U'ᵀ and X ≈ Q B = (Q V') Σ U'ᵀ.
	var v mat.Dense
	svd.VTo(&v)
	var u mat.Dense
	u.Mul(q, &v)
	return mat.DenseCopyOf(u.Slice(0, d, 0, k)), svd.Values(nil)[:k], nil
}

// mul returns X·B for the dense Cols×l B.
func (x CSC) mul(b *mat.Dense) *mat.Dense {
	_, l := b.Dims()
	y := mat.NewDense(x.Rows, l, nil)
	yr, br := y.RawMatrix(), b.RawMatrix()
	for j := range x.Cols() {
		bj := br.Data[j*br.Stride : j*br.Stride+l]
		for p := x.Ptr[j]; p < x.Ptr[j+1]; p++ {
			t := x.Idx[p]
			floats.AddScaled(yr.Data[t*yr.Stride:t*yr.Stride+l], x.Val[p], bj)
		}
	}
	return y
}

// mulT returns Xᵀ·Q for the dense Rows×l Q.
func (x CSC) mulT(q *mat.Dense) *mat.Dense {
	_, l := q.Dims()
	z := mat.NewDense(x.Cols(), l, nil)
	zr, qr := z.RawMatrix(), q.RawMatrix()
	for j := range x.Cols() {
		zj := zr.Data[j*zr.Stride : j*zr.Stride+l]
		for p := x.Ptr[j]; p < x.Ptr[j+1]; p++ {
			t := x.Idx[p]
			floats.AddScaled(zj, x.Val[p], qr.Data[t*qr.Stride:t*qr.Stride+l])
		}
	}
	return z
}

// Orthonormal returns an orthonormal basis of a's column space by modified
// Gram–Schmidt applied twice ("twice is enough", Giraud et al., 2005). A
// thin factorization is needed: gonum's QR only yields the full r×r Q,
// which for a vocabulary-sized r would not fit in memory. Columns that are
// numerically dependent come out as zero.
func Orthonormal(a *mat.Dense) *mat.Dense {
	r, c := a.Dims()
	cols := mat.DenseCopyOf(a.T()) // row j is column j of a
	raw := cols.RawMatrix()
	col := func(j int) []float64 { return raw.Data[j*raw.Stride : j*raw.Stride+r] }
	for j := range c {
		v := col(j)
		norm0 := floats.Norm(v, 2)
		for range 2 {
			for i := range j {
				u := col(i)
				floats.AddScaled(v, -floats.Dot(u, v), u)
			}
		}
		if n := floats.Norm(v, 2); n > 1e-10*max(norm0, 1e-300) && n > 0 {
			floats.Scale(1/n, v)
		} else {
			for i := range v {
				v[i] = 0
			}
		}
	}
	return mat.DenseCopyOf(cols.T())
}
