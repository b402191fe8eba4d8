package dse

import (
	"context"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/semrank/semrank/models/concept"
)

// rbm trains one layer as a restricted Boltzmann machine with CD-1.
type rbm struct {
	l        layer
	gaussian bool // linear hidden units with unit-variance Gaussian noise
	lr, mom  float64
	decay    float64
	vW       *mat.Dense // momentum ("velocity") of W, b, c
	vB, vC   []float64
	rng      *rand.Rand
}

func newRBM(in, out int, gaussian bool, lr float64, cfg Config, rng *rand.Rand) *rbm {
	w := mat.NewDense(in, out, nil)
	raw := w.RawMatrix().Data
	for i := range raw {
		raw[i] = 0.01 * rng.NormFloat64()
	}
	return &rbm{
		l:        layer{W: w, B: make([]float64, in), C: make([]float64, out)},
		gaussian: gaussian, lr: lr, mom: cfg.Momentum, decay: cfg.WeightDecay,
		vW: mat.NewDense(in, out, nil), vB: make([]float64, in), vC: make([]float64, out),
		rng: rng,
	}
}

// step runs CD-1 on a minibatch v0 (rows are visible vectors) and returns
// the summed squared reconstruction error.
func (r *rbm) step(v0 *mat.Dense) float64 {
	n, in := v0.Dims()
	_, out := r.l.W.Dims()
	ph0 := r.l.up(v0, !r.gaussian)
	h0 := mat.DenseCopyOf(ph0)
	hr := h0.RawMatrix().Data
	for i := range hr {
		if r.gaussian {
			hr[i] += r.rng.NormFloat64()
		} else if r.rng.Float64() < hr[i] {
			hr[i] = 1
		} else {
			hr[i] = 0
		}
	}
	v1 := r.down(h0)
	ph1 := r.l.up(v1, !r.gaussian)

	var pos, neg mat.Dense
	pos.Mul(v0.T(), ph0)
	neg.Mul(v1.T(), ph1)
	pos.Sub(&pos, &neg)
	pos.Scale(1/float64(n), &pos)
	// v ← m·v + ε(∂ − λW); W ← W + v.
	var decay mat.Dense
	decay.Scale(r.decay, r.l.W)
	pos.Sub(&pos, &decay)
	pos.Scale(r.lr, &pos)
	r.vW.Scale(r.mom, r.vW)
	r.vW.Add(r.vW, &pos)
	r.l.W.Add(r.l.W, r.vW)

	var errSum float64
	for j := range in {
		var g float64
		for i := range n {
			d := v0.At(i, j) - v1.At(i, j)
			g += d
			errSum += d * d
		}
		r.vB[j] = r.mom*r.vB[j] + r.lr*g/float64(n)
		r.l.B[j] += r.vB[j]
	}
	for j := range out {
		var g float64
		for i := range n {
			g += ph0.At(i, j) - ph1.At(i, j)
		}
		r.vC[j] = r.mom*r.vC[j] + r.lr*g/float64(n)
		r.l.C[j] += r.vC[j]
	}
	return errSum
}

// down returns the visible probabilities σ(h·Wᵀ + b).
func (r *rbm) down(h *mat.Dense) *mat.Dense {
	n, _ := h.Dims()
	in, _ := r.l.W.Dims()
	v := mat.NewDense(n, in, nil)
	v.Mul(h, r.l.W.T())
	raw := v.RawMatrix()
	for i := range n {
		row := raw.Data[i*raw.Stride : i*raw.Stride+in]
		for j := range row {
			row[j] = sigmoid(row[j] + r.l.B[j])
		}
	}
	return v
}

// train runs epochs of CD-1 over data in shuffled minibatches, reporting
// the mean reconstruction error per example after each epoch.
func (r *rbm) train(ctx context.Context, data *mat.Dense, epochs, batch int, phase string, progress concept.Progress) ([]concept.Iteration, error) {
	n, in := data.Dims()
	var curve []concept.Iteration
	for e := 1; e <= epochs; e++ {
		perm := r.rng.Perm(n)
		var errSum float64
		for lo := 0; lo < n; lo += batch {
			if err := ctx.Err(); err != nil {
				return curve, err
			}
			hi := min(lo+batch, n)
			v0 := mat.NewDense(hi-lo, in, nil)
			for i, p := range perm[lo:hi] {
				v0.SetRow(i, data.RawRowView(p))
			}
			errSum += r.step(v0)
		}
		it := concept.Iteration{Iter: e, Phase: phase, Loss: errSum / float64(n), DevMAP: concept.NoDev}
		curve = append(curve, it)
		progress.Report(it)
	}
	return curve, nil
}
