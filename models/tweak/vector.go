package tweak

import (
	"math"
	"strings"
)

// Vector is a sparse term vector: terms strictly increasing, one weight
// each. Document and query vectors, learned or TF-IDF, share this form.
type Vector struct {
	Terms   []string
	Weights []float64
}

// Map returns the vector as a term → weight map.
func (v Vector) Map() map[string]float64 {
	m := make(map[string]float64, len(v.Terms))
	for i, t := range v.Terms {
		m[t] = v.Weights[i]
	}
	return m
}

// Norm returns the Euclidean norm.
func (v Vector) Norm() float64 {
	var s float64
	for _, w := range v.Weights {
		s += w * w
	}
	return math.Sqrt(s)
}

// Dot returns the inner product.
func (v Vector) Dot(u Vector) float64 {
	var d float64
	shared(len(v.Terms), len(u.Terms), func(i, j int) int { return strings.Compare(v.Terms[i], u.Terms[j]) },
		func(i, j int) { d += v.Weights[i] * u.Weights[j] })
	return d
}

// shared merges two sorted lists of lengths n and m, given a comparison of
// their elements, and calls fn for each pair of equal elements.
func shared(n, m int, cmp func(i, j int) int, fn func(i, j int)) {
	i, j := 0, 0
	for i < n && j < m {
		switch c := cmp(i, j); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			fn(i, j)
			i++
			j++
		}
	}
}

// Cosine returns the cosine of v and u (Eq. 1 of the paper), 0 when either
// is the zero vector.
func Cosine(v, u Vector) float64 {
	n := v.Norm() * u.Norm()
	if n == 0 {
		return 0
	}
	return v.Dot(u) / n
}

// TFIDF returns the paper's baseline vector of a text (Eq. 2):
// tf · log(N/df), with df read from df. A term the table does not know is
// given df 1, the rarest a seen term can be.
func TFIDF(t Text, df *DFTable) Vector {
	v := Vector{Terms: make([]string, len(t.Terms)), Weights: make([]float64, len(t.Terms))}
	for i, o := range t.Terms {
		d := max(df.Freq(o.Term), 1)
		v.Terms[i] = o.Term
		v.Weights[i] = float64(o.TF) * math.Log(float64(max(df.N, d))/float64(d))
	}
	return v
}
