package concept

import "math"

// Sparse is a term vector: parallel slices of vocabulary indices (strictly
// increasing) and weights.
type Sparse struct {
	Idx []int
	Val []float64
}

// Len returns the number of non-zero entries.
func (s Sparse) Len() int { return len(s.Idx) }

// Norm returns the Euclidean norm.
func (s Sparse) Norm() float64 {
	var n float64
	for _, v := range s.Val {
		n += v * v
	}
	return math.Sqrt(n)
}

// Dot returns the inner product of two sparse vectors.
func (s Sparse) Dot(t Sparse) float64 {
	var d float64
	i, j := 0, 0
	for i < len(s.Idx) && j < len(t.Idx) {
		switch {
		case s.Idx[i] < t.Idx[j]:
			i++
		case s.Idx[i] > t.Idx[j]:
			j++
		default:
			d += s.Val[i] * t.Val[j]
			i++
			j++
		}
	}
	return d
}

// Cosine returns the cosine of two sparse vectors, 0 when either is zero.
func (s Sparse) Cosine(t Sparse) float64 {
	ns, nt := s.Norm(), t.Norm()
	if ns == 0 || nt == 0 {
		return 0
	}
	return s.Dot(t) / (ns * nt)
}

// Normalized returns a copy scaled to unit norm (the zero vector stays zero).
func (s Sparse) Normalized() Sparse {
	n := s.Norm()
	out := Sparse{Idx: s.Idx, Val: make([]float64, len(s.Val))}
	if n == 0 {
		return out
	}
	for i, v := range s.Val {
		out.Val[i] = v / n
	}
	return out
}

// Dense returns the vector as a dense slice of length dim.
func (s Sparse) Dense(dim int) []float64 {
	out := make([]float64, dim)
	for i, j := range s.Idx {
		out[j] = s.Val[i]
	}
	return out
}
