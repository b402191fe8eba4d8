package concept

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/semrank/semrank/models"
)

// AddMatrix stores a dense matrix in a bundle under name.
func AddMatrix(b *models.Bundle, name string, m *mat.Dense) {
	r, c := m.Dims()
	b.AddTensor(name, []int{r, c}, mat.DenseCopyOf(m).RawMatrix().Data)
}

// MatrixFrom reads the named 2-d tensor of a bundle as a matrix, checking
// it has rows rows (when rows > 0) and only finite values.
func MatrixFrom(b *models.Bundle, name string, rows int) (*mat.Dense, error) {
	t, err := b.Tensor(name, 2)
	if err != nil {
		return nil, err
	}
	r, c := t.Shape[0], t.Shape[1]
	if r <= 0 || c <= 0 {
		return nil, fmt.Errorf("concept: %s tensor %q has empty shape %v", b.Manifest.Method, name, t.Shape)
	}
	if rows > 0 && r != rows {
		return nil, fmt.Errorf("concept: %s tensor %q has %d rows, want %d", b.Manifest.Method, name, r, rows)
	}
	if err := CheckFinite(t.Data); err != nil {
		return nil, fmt.Errorf("concept: %s tensor %q: %w", b.Manifest.Method, name, err)
	}
	return mat.NewDense(r, c, t.Data), nil
}

// CheckFinite returns an error naming the first NaN or infinite value.
func CheckFinite(v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("value %d is %v", i, x)
		}
	}
	return nil
}

// Project returns the concept vector projᵀf of a term vector f, for a d×k
// projection whose rows are indexed by term. Each term's row is added
// scaled by gonum's vectorized axpy, which rounds every element as the
// scalar g[j] += x·a does (TestProjectAxpy), in a third less time: a
// query's projection is a part of every reranked search.
func Project(proj *mat.Dense, f Sparse) []float64 {
	raw := proj.RawMatrix()
	k := raw.Cols
	g := make([]float64, k)
	for i, t := range f.Idx {
		floats.AddScaled(g, f.Val[i], raw.Data[t*raw.Stride:t*raw.Stride+k])
	}
	return g
}
