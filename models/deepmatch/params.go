package deepmatch

import (
	"math"
	"math/rand/v2"
)

// block is one group of parameters updated together: a patch's filters, a
// word's row of a projection, a dense layer. Back-propagation touches only
// the blocks an example reaches, and an update visits only touched blocks,
// which is how training exploits the sparsity of the networks.
type block struct {
	w, g, h []float64 // weights, gradient, AdaGrad's sum of squared gradients
	touched bool
}

// params owns a network's blocks and runs the optimiser over them.
type params struct {
	blocks  []*block
	touched []*block
}

// add allocates a block of n weights drawn from N(0, scale²).
func (ps *params) add(n int, scale float64, rng *rand.Rand) *block {
	b := &block{w: make([]float64, n), g: make([]float64, n), h: make([]float64, n)}
	for i := range b.w {
		b.w[i] = rng.NormFloat64() * scale
	}
	ps.blocks = append(ps.blocks, b)
	return b
}

// grad returns b's gradient buffer, marking b as touched.
func (ps *params) grad(b *block) []float64 {
	if !b.touched {
		b.touched = true
		ps.touched = append(ps.touched, b)
	}
	return b.g
}

// step applies AdaGrad with learning rate lr to the touched blocks, adding
// the gradient of (l2/2)·‖w‖² first (addL2), and clears their gradients.
func (ps *params) step(lr, l2 float64) {
	ps.addL2(l2)
	for _, b := range ps.touched {
		for i, g := range b.g {
			b.h[i] += g * g
			b.w[i] -= lr * g / (math.Sqrt(b.h[i]) + 1e-8)
			b.g[i] = 0
		}
		b.touched = false
	}
	ps.touched = ps.touched[:0]
}

// addL2 adds the gradient of (l2/2)·‖w‖² over the touched blocks (only
// those: the penalty is sparse, like the updates) to their gradients.
func (ps *params) addL2(l2 float64) {
	for _, b := range ps.touched {
		for i, w := range b.w {
			b.g[i] += l2 * w
		}
	}
}

// snapshot copies all weights, for early stopping.
func (ps *params) snapshot() [][]float64 {
	out := make([][]float64, len(ps.blocks))
	for i, b := range ps.blocks {
		out[i] = append([]float64(nil), b.w...)
	}
	return out
}

// restore sets the weights from a snapshot.
func (ps *params) restore(s [][]float64) {
	for i, b := range ps.blocks {
		copy(b.w, s[i])
	}
}

// count is the number of weights.
func (ps *params) count() int {
	n := 0
	for _, b := range ps.blocks {
		n += len(b.w)
	}
	return n
}

func sigmoid(t float64) float64 { return 1 / (1 + math.Exp(-t)) }

// activation applies neuron k's function: the paper mixes linear and
// sigmoid units; here odd-numbered neurons of a layer are sigmoid and
// even-numbered ones linear.
func activation(k int, t float64) float64 {
	if k%2 == 1 {
		return sigmoid(t)
	}
	return t
}

// slope is the derivative of neuron k's function at output a.
func slope(k int, a float64) float64 {
	if k%2 == 1 {
		return a * (1 - a)
	}
	return 1
}
