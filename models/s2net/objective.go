package s2net

import (
	"math"
	"sort"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/semrank/semrank/models/concept"
)

// pref is a preference pair of similarity scores: sim(q, pos) should exceed
// sim(q, neg). Fields index objective.vecs.
type pref struct{ q, pos, neg int }

// link is a comparable pair (a, b), indices into objective.vecs.
type link struct{ a, b int }

// objective is S2Net's batch loss over preference pairs and blocks of
// comparable pairs, and its gradient with respect to the projection A
// (Appendix A), computed for all pairs at once: every distinct term vector
// is projected once, the loss's gradient with respect to each concept
// vector g_m is accumulated, and ∂L/∂A = Σ_m f_m (∂L/∂g_m)ᵀ.
type objective struct {
	d, k    int
	gamma   float64
	vecs    []concept.Sparse
	prefs   []pref
	wPref   float64  // weight of each preference pair's loss
	blocks  [][]link // comparable pairs; each pair's negatives are the others in its block
	wLink   float64  // weight of each comparable-pair comparison
	workers int
}

// logistic returns log(1+exp(−γΔ)) and its derivative with respect to Δ,
// computed without overflow.
func logistic(gamma, delta float64) (loss, dDelta float64) {
	z := -gamma * delta
	if z > 0 {
		loss = z + math.Log1p(math.Exp(-z))
	} else {
		loss = math.Log1p(math.Exp(z))
	}
	// d/dΔ log(1+e^z) = σ(z)·(−γ).
	return loss, -gamma / (1 + math.Exp(-z))
}

// project returns G (m×k) with rows g_m = Aᵀf_m, computed in parallel.
func (o *objective) project(a *mat.Dense) *mat.Dense {
	g := mat.NewDense(len(o.vecs), o.k, nil)
	parallel(len(o.vecs), o.workers, func(lo, hi int) {
		raw := g.RawMatrix()
		for m := lo; m < hi; m++ {
			copy(raw.Data[m*raw.Stride:m*raw.Stride+o.k], concept.Project(a, o.vecs[m]))
		}
	})
	return g
}

// eval returns the loss at A and, when grad is non-nil, writes ∂L/∂A into
// it (d×k, row-major).
func (o *objective) eval(a *mat.Dense, grad []float64) float64 {
	g := o.project(a)
	m := len(o.vecs)
	norms := make([]float64, m)
	for i := range m {
		norms[i] = floats.Norm(g.RawRowView(i), 2)
	}
	dg := mat.NewDense(m, o.k, nil)
	loss := o.prefLoss(g, norms, dg)
	loss += o.linkLoss(g, norms, dg)
	if grad != nil {
		o.backProject(dg, grad)
	}
	return loss
}

// cosGrad adds s·∂cos(g_p, g_q)/∂g_p to dp and s·∂cos/∂g_q to dq and
// returns the cosine. With a = g_pᵀg_q, b = 1/‖g_p‖, c = 1/‖g_q‖ (Appendix
// A): ∂cos/∂g_p = bc·g_q − a·b³c·g_p, and symmetrically for g_q.
func cosGrad(gp, gq []float64, np, nq, s float64, dp, dq []float64) float64 {
	if np == 0 || nq == 0 {
		return 0
	}
	var a float64
	for j := range gp {
		a += gp[j] * gq[j]
	}
	b, c := 1/np, 1/nq
	if dp != nil {
		for j := range gp {
			dp[j] += s * (b*c*gq[j] - a*b*b*b*c*gp[j])
			dq[j] += s * (b*c*gp[j] - a*b*c*c*c*gq[j])
		}
	}
	return a * b * c
}

func (o *objective) prefLoss(g *mat.Dense, norms []float64, dg *mat.Dense) float64 {
	var loss float64
	for _, p := range o.prefs {
		gq, gpos, gneg := g.RawRowView(p.q), g.RawRowView(p.pos), g.RawRowView(p.neg)
		delta := cosGrad(gq, gpos, norms[p.q], norms[p.pos], 0, nil, nil) -
			cosGrad(gq, gneg, norms[p.q], norms[p.neg], 0, nil, nil)
		l, dl := logistic(o.gamma, delta)
		loss += o.wPref * l
		s := o.wPref * dl
		cosGrad(gq, gpos, norms[p.q], norms[p.pos], s, dg.RawRowView(p.q), dg.RawRowView(p.pos))
		cosGrad(gq, gneg, norms[p.q], norms[p.neg], -s, dg.RawRowView(p.q), dg.RawRowView(p.neg))
	}
	return loss
}

// linkLoss is the comparable-pair loss: within a block of pairs (a_i, b_i),
// each a_i should be closer to b_i than to every other b_j, and each b_i
// closer to a_i than to every other a_j. The block's cosines come from one
// matrix product of unit concept vectors, so the n² comparisons reuse the
// n projections, as the paper describes.
func (o *objective) linkLoss(g *mat.Dense, norms []float64, dg *mat.Dense) float64 {
	type out struct {
		loss   float64
		du, dv *mat.Dense
	}
	res := make([]out, len(o.blocks))
	parallel(len(o.blocks), o.workers, func(lo, hi int) {
		for bi := lo; bi < hi; bi++ {
			blk := o.blocks[bi]
			n := len(blk)
			u := mat.NewDense(n, o.k, nil) // unit vectors of the a side
			v := mat.NewDense(n, o.k, nil) // unit vectors of the b side
			for i, l := range blk {
				unitInto(u.RawRowView(i), g.RawRowView(l.a), norms[l.a])
				unitInto(v.RawRowView(i), g.RawRowView(l.b), norms[l.b])
			}
			var s mat.Dense
			s.Mul(u, v.T())
			ds := mat.NewDense(n, n, nil)
			var loss float64
			for i := range n {
				sii := s.At(i, i)
				for j := range n {
					if j == i {
						continue
					}
					l1, d1 := logistic(o.gamma, sii-s.At(i, j)) // a_i: b_i over b_j
					l2, d2 := logistic(o.gamma, sii-s.At(j, i)) // b_i: a_i over a_j
					loss += o.wLink * (l1 + l2)
					ds.Set(i, i, ds.At(i, i)+o.wLink*(d1+d2))
					ds.Set(i, j, ds.At(i, j)-o.wLink*d1)
					ds.Set(j, i, ds.At(j, i)-o.wLink*d2)
				}
			}
			var du, dv mat.Dense
			du.Mul(ds, v)     // ∂L/∂u = dS·V
			dv.Mul(ds.T(), u) // ∂L/∂v = dSᵀ·U
			res[bi] = out{loss, &du, &dv}
		}
	})
	var loss float64
	for bi, r := range res {
		loss += r.loss
		for i, l := range o.blocks[bi] {
			unitBack(dg.RawRowView(l.a), r.du.RawRowView(i), g.RawRowView(l.a), norms[l.a])
			unitBack(dg.RawRowView(l.b), r.dv.RawRowView(i), g.RawRowView(l.b), norms[l.b])
		}
	}
	return loss
}

func unitInto(dst, g []float64, n float64) {
	if n == 0 {
		return
	}
	for j, x := range g {
		dst[j] = x / n
	}
}

// unitBack adds to dg the gradient through u = g/‖g‖ of the upstream du:
// (du − u(uᵀdu))/‖g‖.
func unitBack(dg, du, g []float64, n float64) {
	if n == 0 {
		return
	}
	var dot float64
	for j := range g {
		dot += g[j] * du[j]
	}
	dot /= n
	for j := range g {
		dg[j] += (du[j] - g[j]/n*dot) / n
	}
}

// backProject writes Σ_m f_m dg_mᵀ into grad (d×k). Rows of grad are
// split among workers; each walks every term vector but touches only its
// rows, so no two workers write the same memory.
func (o *objective) backProject(dg *mat.Dense, grad []float64) {
	for i := range grad {
		grad[i] = 0
	}
	k := o.k
	parallel(o.d, o.workers, func(lo, hi int) {
		for m, f := range o.vecs {
			i := sort.SearchInts(f.Idx, lo)
			row := dg.RawRowView(m)
			for ; i < len(f.Idx) && f.Idx[i] < hi; i++ {
				x := f.Val[i]
				gr := grad[f.Idx[i]*k : f.Idx[i]*k+k]
				for j, v := range row {
					gr[j] += x * v
				}
			}
		}
	})
}

// parallel runs fn over [0, n) split into one contiguous range per worker.
func parallel(n, workers int, fn func(lo, hi int)) {
	if workers <= 1 || n < 2 {
		fn(0, n)
		return
	}
	workers = min(workers, n)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}
