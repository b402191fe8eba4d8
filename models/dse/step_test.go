package dse

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestSGDStepDescendsRegularisedLoss checks what one fine-tuning step
// descends: from zero velocity, sgdStep must move every weight by −ε times
// the gradient of F/n + (λ/2)·Σ‖W‖² (the batch's mean margin loss plus
// weight decay on the weight matrices, not on the biases), compared here
// with central differences of that objective.
func TestSGDStepDescendsRegularisedLoss(t *testing.T) {
	sizes := []int{6, 4, 4, 6, 3}
	m := tinyModel(sizes, 5)
	m.Config = Config{FineTuneLR: 0.5, Momentum: 0.9, WeightDecay: 0.03}
	rng := rand.New(rand.NewPCG(6, 7))
	x := mat.NewDense(6, 6, nil)
	for k := range x.RawMatrix().Data {
		if rng.IntN(2) == 1 {
			x.RawMatrix().Data[k] = 1
		}
	}
	var batch []triple
	for _, tr := range []triple{{0, 1, 2}, {0, 3, 4}, {1, 2, 3}, {4, 0, 1}, {5, 2, 0}, {3, 5, 4}} {
		// Keep the loss differentiable: no triple near the hinge's kink.
		if f := 1 - pairScore(m, x, tr.q, tr.pos) + pairScore(m, x, tr.q, tr.neg); math.Abs(f) > 0.05 {
			batch = append(batch, tr)
		}
	}
	if len(batch) < 3 {
		t.Fatalf("only %d usable triples; change the seed", len(batch))
	}
	n := float64(len(batch))
	lambda := m.Config.WeightDecay
	objective := func() float64 {
		j := m.tripleGrad(x, batch, m.zeroGrads()) / n
		for _, l := range m.layers {
			for _, w := range l.W.RawMatrix().Data {
				j += lambda / 2 * w * w
			}
		}
		return j
	}
	// Numeric gradient at the starting point.
	const h = 1e-6
	var num [][2][]float64
	for _, l := range m.layers {
		var g [2][]float64
		for p, params := range [][]float64{l.W.RawMatrix().Data, l.C} {
			g[p] = make([]float64, len(params))
			for k := range params {
				orig := params[k]
				params[k] = orig + h
				fp := objective()
				params[k] = orig - h
				fm := objective()
				params[k] = orig
				g[p][k] = (fp - fm) / (2 * h)
			}
		}
		num = append(num, g)
	}
	before := m.cloneLayers()
	g := m.zeroGrads()
	m.tripleGrad(x, batch, g)
	m.sgdStep(g, m.zeroGrads(), n)
	lr := m.Config.FineTuneLR
	for i, l := range m.layers {
		after := [][]float64{l.W.RawMatrix().Data, l.C}
		start := [][]float64{before[i].W.RawMatrix().Data, before[i].C}
		for p := range after {
			for k := range after[p] {
				implied := -(after[p][k] - start[p][k]) / lr
				if d := math.Abs(implied - num[i][p][k]); d > 1e-6*math.Max(math.Abs(num[i][p][k]), 1e-3) {
					t.Errorf("layer %d %s[%d]: step implies gradient %.10g, numeric %.10g", i, []string{"W", "c"}[p], k, implied, num[i][p][k])
				}
			}
		}
	}
}

// pairScore returns s(q, d) = Φ(x_q)·Φ(x_d).
func pairScore(m *Model, x *mat.Dense, q, d int) float64 {
	acts := m.forward(gather(x, []int{q, d}))
	phi := acts[len(acts)-1]
	var s float64
	for j := range phi.RawRowView(0) {
		s += phi.At(0, j) * phi.At(1, j)
	}
	return s
}
