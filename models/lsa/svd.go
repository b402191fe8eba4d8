package lsa

import (
	"errors"

	"gonum.org/v1/gonum/mat"

	"github.com/semrank/semrank/internal/rsvd"
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
// d×n matrix X whose columns are docs (see package rsvd).
func randomizedSVD(d int, docs []concept.Sparse, k, over, power int, seed uint64) (*mat.Dense, []float64, error) {
	x := rsvd.CSC{Rows: d, Ptr: make([]int, 1, len(docs)+1)}
	for _, doc := range docs {
		x.Idx = append(x.Idx, doc.Idx...)
		x.Val = append(x.Val, doc.Val...)
		x.Ptr = append(x.Ptr, len(x.Idx))
	}
	return rsvd.Left(x, k, over, power, seed)
}
