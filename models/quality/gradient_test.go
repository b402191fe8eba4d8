package quality

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomProblem returns n unit-length binary feature vectors over d
// features (some empty), random labels, and a random parameter point
// (weights and bias).
func randomProblem(rng *rand.Rand, n, d int) ([]sparse, []float64, []float64) {
	xs := make([]sparse, n)
	ys := make([]float64, n)
	for i := range xs {
		for j := range d {
			if rng.IntN(3) == 0 {
				xs[i].idx = append(xs[i].idx, j)
			}
		}
		if len(xs[i].idx) > 0 {
			xs[i].val = 1 / math.Sqrt(float64(len(xs[i].idx)))
		}
		ys[i] = float64(rng.IntN(2))
	}
	p := make([]float64, d+1)
	for j := range p {
		p[j] = 2 * rng.NormFloat64()
	}
	return xs, ys, p
}

// TestObjectiveIsDocumented checks the training objective against a
// direct transcription of the doc comment: mean logistic loss plus
// L2/2·‖w‖², the bias not penalised.
func TestObjectiveIsDocumented(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, d, l2 = 25, 6, 0.3
	xs, ys, p := randomProblem(rng, n, d)
	var want float64
	for i, x := range xs {
		z := p[d]
		for _, j := range x.idx {
			z += p[j] * x.val
		}
		q := 1 / (1 + math.Exp(-z))
		want -= ys[i]*math.Log(q) + (1-ys[i])*math.Log(1-q)
	}
	want /= n
	for _, w := range p[:d] {
		want += l2 / 2 * w * w
	}
	if got := objective(xs, ys, d, l2).Func(p); math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("objective %.15g, want %.15g", got, want)
	}
	// Far from the origin the loss stays finite (no overflow in e^z).
	big := append([]float64(nil), p...)
	big[d] = 800
	g := make([]float64, d+1)
	obj := objective(xs, ys, d, l2)
	obj.Grad(g, big)
	if f := obj.Func(big); math.IsNaN(f) || math.IsInf(f, 0) || !finiteAll(g) {
		t.Errorf("loss %v, gradient %v at bias 800", f, g)
	}
	big[d] = -800
	obj.Grad(g, big)
	if f := obj.Func(big); math.IsNaN(f) || math.IsInf(f, 0) || !finiteAll(g) {
		t.Errorf("loss %v, gradient %v at bias −800", f, g)
	}
}

func finiteAll(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// TestObjectiveGradient compares the analytic gradient of the logistic
// regression objective, bias included, with central differences.
func TestObjectiveGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 3 {
		const n, d = 25, 6
		l2 := []float64{0, 3e-4, 0.5}[trial]
		xs, ys, p := randomProblem(rng, n, d)
		obj := objective(xs, ys, d, l2)
		g := make([]float64, d+1)
		obj.Grad(g, p)
		const h = 1e-6
		for j := range p {
			orig := p[j]
			p[j] = orig + h
			fp := obj.Func(p)
			p[j] = orig - h
			fm := obj.Func(p)
			p[j] = orig
			num := (fp - fm) / (2 * h)
			if err := math.Abs(num-g[j]) / math.Max(math.Abs(num), 1e-4); err > 1e-6 {
				t.Errorf("l2 %g: ∂L/∂p[%d] analytic %.10g, numeric %.10g (relative error %.2g)", l2, j, g[j], num, err)
			}
		}
	}
}
