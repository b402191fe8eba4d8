package deepmatch

import (
	"math"
	"math/rand/v2"
)

// Siamese is the paper's nonlinear inner-product baseline: two multi-layer
// perceptrons, one per side with their own weights (the paper's change to
// Chopra et al. to handle two domains), map x and y into one d-dimensional
// space, and the score is the inner product there. Each tower is one tanh
// hidden layer and a linear output layer; the paper does not give the depth.
type Siamese struct {
	Hidden, Dim int
	tx, ty      tower
	ps          params
}

// tower is one side's MLP: z = W₂ tanh(W₁ᵀx + b₁) + b₂.
type tower struct {
	w1     []*block // one hidden-size row per word
	b1     *block
	w2, b2 *block // Dim×Hidden, Dim
}

// NewSiamese returns a Siamese matcher over vocabularies of vx and vy words.
func NewSiamese(vx, vy, hidden, dim int, init float64, seed uint64) *Siamese {
	rng := rand.New(rand.NewPCG(seed, 0x5a5e))
	m := &Siamese{Hidden: hidden, Dim: dim}
	m.tx = m.newTower(vx, init, rng)
	m.ty = m.newTower(vy, init, rng)
	return m
}

func (m *Siamese) newTower(v int, init float64, rng *rand.Rand) tower {
	var t tower
	for range v {
		t.w1 = append(t.w1, m.ps.add(m.Hidden, init, rng))
	}
	t.b1 = m.ps.add(m.Hidden, 0, rng)
	t.w2 = m.ps.add(m.Dim*m.Hidden, 1/math.Sqrt(float64(m.Hidden)), rng)
	t.b2 = m.ps.add(m.Dim, 0, rng)
	return t
}

// towerState is a tower's hidden and output activations for one input.
type towerState struct{ h, z []float64 }

func (t tower) run(in Input, hidden, dim int) towerState {
	h := append([]float64(nil), t.b1.w...)
	for i, w := range in.Idx {
		for j, a := range t.w1[w].w {
			h[j] += in.Val[i] * a
		}
	}
	for j := range h {
		h[j] = math.Tanh(h[j])
	}
	z := append([]float64(nil), t.b2.w...)
	for d := range dim {
		z[d] += dot(t.w2.w[d*hidden:(d+1)*hidden], h)
	}
	return towerState{h, z}
}

// back adds the gradient of ⟨z, dz⟩ with respect to the tower's weights.
func (t tower) back(ps *params, in Input, st towerState, dz []float64, hidden int) {
	gw2, gb2 := ps.grad(t.w2), ps.grad(t.b2)
	dh := make([]float64, hidden)
	for d, g := range dz {
		gb2[d] += g
		row := t.w2.w[d*hidden : (d+1)*hidden]
		grow := gw2[d*hidden : (d+1)*hidden]
		for j, h := range st.h {
			grow[j] += g * h
			dh[j] += g * row[j]
		}
	}
	for j, h := range st.h {
		dh[j] *= 1 - h*h
	}
	gb1 := ps.grad(t.b1)
	for j, g := range dh {
		gb1[j] += g
	}
	scatter(ps, t.w1, in, dh, 1)
}

// Score returns ⟨Φ_x(x), Φ_y(y)⟩.
func (m *Siamese) Score(x, y Input) float64 {
	s, _ := m.forward(x, y)
	return s
}

// ScoreAll implements matcher: x's tower runs once.
func (m *Siamese) ScoreAll(x Input, ys []Input) []float64 {
	return scoreAll(m, x, ys)
}

// queryVector implements innerProduct: the x tower's output.
func (m *Siamese) queryVector(x Input) []float64 { return m.tx.run(x, m.Hidden, m.Dim).z }

// candidateVector implements innerProduct: the y tower's output.
func (m *Siamese) candidateVector(y Input) []float64 { return m.ty.run(y, m.Hidden, m.Dim).z }

// vectorDim implements innerProduct.
func (m *Siamese) vectorDim() int { return m.Dim }

type siameseState struct{ x, y towerState }

func (m *Siamese) forward(x, y Input) (float64, any) {
	sx, sy := m.tx.run(x, m.Hidden, m.Dim), m.ty.run(y, m.Hidden, m.Dim)
	return dot(sx.z, sy.z), siameseState{sx, sy}
}

func (m *Siamese) backward(x, y Input, st any, ds float64) {
	s := st.(siameseState)
	dzx, dzy := make([]float64, m.Dim), make([]float64, m.Dim)
	for d := range m.Dim {
		dzx[d] = ds * s.y.z[d]
		dzy[d] = ds * s.x.z[d]
	}
	m.tx.back(&m.ps, x, s.x, dzx, m.Hidden)
	m.ty.back(&m.ps, y, s.y, dzy, m.Hidden)
}

func (m *Siamese) params() *params { return &m.ps }
