package deepmatch

import (
	"math"
	"testing"
)

// marginProblem is a small training problem over tinyArch's 8 words a
// side: three queries with candidates, and triples whose negatives are
// same-query candidates and documents of the random pool.
func marginProblem() ([]encoded, []Input, []triple) {
	enc := []encoded{
		{x: input(map[uint32]float64{0: 0.5, 2: 0.3, 3: 0.6, 5: 0.4}), cands: []Input{
			input(map[uint32]float64{1: 0.7, 2: 0.2, 4: 0.5}),
			input(map[uint32]float64{0: 0.4, 3: 0.6, 6: 0.3}),
			input(map[uint32]float64{5: 0.9, 7: 0.2}),
		}},
		{x: input(map[uint32]float64{1: 0.8, 4: 0.3, 6: 0.5, 7: 0.1}), cands: []Input{
			input(map[uint32]float64{4: 0.6, 5: 0.6, 6: 0.2}),
			input(map[uint32]float64{0: 0.3, 1: 0.5, 7: 0.7}),
		}},
		{x: input(map[uint32]float64{0: 0.2, 3: 0.9, 7: 0.4}), cands: []Input{
			input(map[uint32]float64{2: 0.5, 3: 0.5, 6: 0.5}),
			input(map[uint32]float64{1: 0.9, 7: 0.3}),
		}},
	}
	var pool []Input
	for _, e := range enc {
		pool = append(pool, e.cands...)
	}
	ts := []triple{
		{q: 0, pos: 0, neg: 1}, {q: 0, pos: 1, neg: 2}, {q: 0, pos: 0, neg: 5, random: true},
		{q: 1, pos: 0, neg: 1}, {q: 1, pos: 1, neg: 0, random: true}, {q: 1, pos: 0, neg: 6, random: true},
		{q: 2, pos: 0, neg: 1}, {q: 2, pos: 1, neg: 2, random: true},
	}
	return enc, pool, ts
}

// TestMarginLossGradient checks what a training step descends for each
// matcher: the gradient of the mini-batch objective
// (1/|B|)·Σ max(0, m + s(x,y⁻) − s(x,y⁺)) + (l2/2)·Σ_touched ‖w‖²
// (batchGrad, then addL2) against central differences of that objective
// computed from scores alone, for every weight, touched or not.
func TestMarginLossGradient(t *testing.T) {
	enc, pool, ts := marginProblem()
	const l2, h = 0.05, 1e-6
	for _, margin := range []float64{0.1, 0} {
		for _, tc := range tinyMatchers(t) {
			ps := tc.m.params()
			hinge := func() (loss float64, active int, nearKink bool) {
				for _, tr := range ts {
					e := enc[tr.q]
					l := margin + tc.m.Score(e.x, tr.negative(enc, pool)) - tc.m.Score(e.x, e.cands[tr.pos])
					if math.Abs(l) < 1e-3 {
						nearKink = true
					}
					if l > 0 {
						loss += l
						active++
					}
				}
				return loss / float64(len(ts)), active, nearKink
			}
			_, active, nearKink := hinge()
			if nearKink || active == 0 {
				t.Fatalf("%s, margin %g: %d of %d triples active, one near the hinge's kink: change the problem", tc.name, margin, active, len(ts))
			}
			batchGrad(tc.m, enc, pool, ts, margin)
			ps.addL2(l2)
			touched := map[*block]bool{}
			for _, b := range ps.touched {
				touched[b] = true
			}
			objective := func() float64 {
				j, _, _ := hinge()
				for b := range touched {
					for _, w := range b.w {
						j += l2 / 2 * w * w
					}
				}
				return j
			}
			var checked, nonzero int
			for bi, b := range ps.blocks {
				for i := range b.w {
					orig := b.w[i]
					b.w[i] = orig + h
					fp := objective()
					b.w[i] = orig - h
					fm := objective()
					b.w[i] = orig
					num := (fp - fm) / (2 * h)
					if d := math.Abs(num - b.g[i]); d > 1e-6*math.Max(math.Abs(num), 1e-3) {
						t.Errorf("%s, margin %g: block %d weight %d (touched %v): analytic %.10g, numeric %.10g",
							tc.name, margin, bi, i, touched[b], b.g[i], num)
					}
					checked++
					if num != 0 {
						nonzero++
					}
				}
			}
			if nonzero < 10 {
				t.Errorf("%s, margin %g: only %d of %d weights have a nonzero gradient", tc.name, margin, nonzero, checked)
			}
			t.Logf("%s, margin %g: %d of %d triples active, %d weights checked, %d with nonzero gradient",
				tc.name, margin, active, len(ts), checked, nonzero)
			ps.zeroGrad()
		}
	}
}
