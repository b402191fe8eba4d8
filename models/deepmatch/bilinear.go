package deepmatch

import "math/rand/v2"

// Bilinear is the paper's low-rank bilinear baseline,
// match(x, y) = ⟨P_xᵀx, P_yᵀy⟩ = xᵀP_xP_yᵀy, the form shared by PLS and
// RMLS. Here P_x and P_y are fitted with the same large-margin ranking loss
// and ℓ2 penalty as DeepMatch rather than under PLS's orthonormality
// constraint (the paper tunes its baselines' constraints; a margin fit is
// the stronger of the two on ranking and needs no eigensolver over the
// vocabulary-sized cross-covariance).
type Bilinear struct {
	Dim    int
	px, py []*block // one row of P per word
	ps     params
}

// NewBilinear returns a bilinear matcher of rank dim over vocabularies of
// vx and vy words, initialised at random with scale init.
func NewBilinear(vx, vy, dim int, init float64, seed uint64) *Bilinear {
	rng := rand.New(rand.NewPCG(seed, 0xb111))
	m := &Bilinear{Dim: dim}
	for range vx {
		m.px = append(m.px, m.ps.add(dim, init, rng))
	}
	for range vy {
		m.py = append(m.py, m.ps.add(dim, init, rng))
	}
	return m
}

// embed returns Pᵀx.
func embed(rows []*block, in Input, dim int) []float64 {
	u := make([]float64, dim)
	for i, w := range in.Idx {
		for d, p := range rows[w].w {
			u[d] += in.Val[i] * p
		}
	}
	return u
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Score returns xᵀP_xP_yᵀy.
func (m *Bilinear) Score(x, y Input) float64 {
	return dot(m.queryVector(x), m.candidateVector(y))
}

// ScoreAll implements matcher: Pₓᵀx is computed once.
func (m *Bilinear) ScoreAll(x Input, ys []Input) []float64 {
	return scoreAll(m, x, ys)
}

// queryVector implements innerProduct: Pₓᵀx.
func (m *Bilinear) queryVector(x Input) []float64 { return embed(m.px, x, m.Dim) }

// candidateVector implements innerProduct: P_yᵀy.
func (m *Bilinear) candidateVector(y Input) []float64 { return embed(m.py, y, m.Dim) }

// vectorDim implements innerProduct.
func (m *Bilinear) vectorDim() int { return m.Dim }

type bilinearState struct{ u, v []float64 }

func (m *Bilinear) forward(x, y Input) (float64, any) {
	u, v := embed(m.px, x, m.Dim), embed(m.py, y, m.Dim)
	return dot(u, v), bilinearState{u, v}
}

func (m *Bilinear) backward(x, y Input, st any, ds float64) {
	s := st.(bilinearState)
	scatter(&m.ps, m.px, x, s.v, ds)
	scatter(&m.ps, m.py, y, s.u, ds)
}

// scatter adds ds·val·dir to the row of each word of in.
func scatter(ps *params, rows []*block, in Input, dir []float64, ds float64) {
	for i, w := range in.Idx {
		g := ps.grad(rows[w])
		c := ds * in.Val[i]
		for d, v := range dir {
			g[d] += c * v
		}
	}
}

func (m *Bilinear) params() *params { return &m.ps }
