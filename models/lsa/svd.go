package lsa

import (
	"errors"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/semrank/semrank/models/concept"
)

// exactSVD returns the k leading left singular vectors and values of the
// d×n matrix whose columns are docs, through a dense thin SVD.
func exactSVD(d int, docs []concept.Sparse, k int) (*mat.Dense, []float64, error) {
	x := mat.NewDense(d, len(docs), nil)
	for j, doc := range docs {
		for i, t := range doc.Idx {
			x.Set(t, j, doc.Val[i])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(x, mat.SVDThinU) {
		return nil, nil, errors.New("lsa: SVD did not converge")
	}
	var u mat.Dense
	svd.UTo(&u)
	return mat.DenseCopyOf(u.Slice(0, d, 0, k)), svd.Values(nil)[:k], nil
}

// randomizedSVD approximates the k leading singular triplets of the sparse
// d×n matrix X whose columns are docs (Halko et al., 2011, Alg. 4.4 with
// re-orthonormalised power iterations).
func randomizedSVD(d int, docs []concept.Sparse, k, over, power int, seed uint64) (*mat.Dense, []float64, error) {
	n := len(docs)
	l := min(k+over, min(d, n))
	rng := rand.New(rand.NewPCG(seed, 0x15a))
	omega := mat.NewDense(n, l, nil)
	raw := omega.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	q := orthonormal(mulX(d, docs, omega)) // d×l
	for range power {
		z := orthonormal(mulXT(docs, q)) // n×l
		q = orthonormal(mulX(d, docs, z))
	}
	bt := mulXT(docs, q) // n×l = (QᵀX)ᵀ
	var svd mat.SVD
	if !svd.Factorize(bt, mat.SVDThin) {
		return nil, nil, errors.New("lsa: SVD of the sketch did not converge")
	}
	// Bᵀ = U' Σ V'ᵀ, so B = V' Σ U'ᵀ and X ≈ Q B = (Q V') Σ U'ᵀ.
	var v mat.Dense
	svd.VTo(&v)
	var u mat.Dense
	u.Mul(q, &v)
	return mat.DenseCopyOf(u.Slice(0, d, 0, k)), svd.Values(nil)[:k], nil
}

// mulX returns X·B for the d×n sparse X (columns docs) and dense n×l B.
func mulX(d int, docs []concept.Sparse, b *mat.Dense) *mat.Dense {
	_, l := b.Dims()
	y := mat.NewDense(d, l, nil)
	yr, br := y.RawMatrix(), b.RawMatrix()
	for j, doc := range docs {
		bj := br.Data[j*br.Stride : j*br.Stride+l]
		for i, t := range doc.Idx {
			x := doc.Val[i]
			yt := yr.Data[t*yr.Stride : t*yr.Stride+l]
			for c, v := range bj {
				yt[c] += x * v
			}
		}
	}
	return y
}

// mulXT returns Xᵀ·Q for the sparse X (columns docs) and dense d×l Q.
func mulXT(docs []concept.Sparse, q *mat.Dense) *mat.Dense {
	_, l := q.Dims()
	z := mat.NewDense(len(docs), l, nil)
	zr, qr := z.RawMatrix(), q.RawMatrix()
	for j, doc := range docs {
		zj := zr.Data[j*zr.Stride : j*zr.Stride+l]
		for i, t := range doc.Idx {
			x := doc.Val[i]
			qt := qr.Data[t*qr.Stride : t*qr.Stride+l]
			for c, v := range qt {
				zj[c] += x * v
			}
		}
	}
	return z
}

// orthonormal returns an orthonormal basis of a's column space by modified
// Gram–Schmidt applied twice ("twice is enough", Giraud et al., 2005). A
// thin factorization is needed: gonum's QR only yields the full r×r Q,
// which for a vocabulary-sized r would not fit in memory. Columns that are
// numerically dependent come out as zero.
func orthonormal(a *mat.Dense) *mat.Dense {
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
