package dse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/semrank/semrank/models/concept"
)

// Options are training inputs that are not saved with the model.
type Options struct {
	// Dev are the held-out lists for early stopping and choosing Mix; when
	// empty, Config.DevFrac of the training lists are held out.
	Dev []concept.Judged
	// Base, when set, supplies pretrained layers below the top: layers
	// whose sizes match are reused instead of pretrained again (several
	// models with different C can share one pretraining). Its vocabulary
	// is the new model's, so it must have D terms.
	Base     *Model
	Progress concept.Progress
}

// Pretrain builds the vocabulary and pretrains the network greedily as
// stacked RBMs on the unlabelled texts (and the lists' texts), reusing
// matching layers of opt.Base.
func Pretrain(ctx context.Context, data concept.Data, cfg Config, opt Options) (*Model, []concept.Iteration, error) {
	cfg = cfg.withDefaults()
	if err := cfg.checkFinite(); err != nil {
		return nil, nil, err
	}
	if cfg.Input != concept.Binary && cfg.Input != concept.TFIDFNorm {
		return nil, nil, fmt.Errorf("dse: input must be binary or tfidf-l2, not %q", cfg.Input)
	}
	sizes := cfg.sizes()
	for _, s := range sizes {
		if s <= 0 {
			return nil, nil, fmt.Errorf("dse: layer sizes %v must be positive", sizes)
		}
	}
	texts := allTexts(data)
	m := &Model{Config: cfg}
	if opt.Base != nil {
		if opt.Base.Config.Input != cfg.Input {
			return nil, nil, errors.New("dse: base model uses a different input weighting")
		}
		m.Space = opt.Base.Space
	} else {
		var err error
		if m.Space, err = concept.BuildSpace(texts, concept.SpaceConfig{MaxTerms: cfg.D}); err != nil {
			return nil, nil, err
		}
	}
	if m.Space.Dim() < cfg.D {
		return nil, nil, fmt.Errorf("dse: only %d terms in the vocabulary, D=%d requested", m.Space.Dim(), cfg.D)
	}
	if m.Space.Dim() != cfg.D {
		// Only a base model's vocabulary can be larger: it is the input
		// layer, and the first RBM would not fit it.
		return nil, nil, fmt.Errorf("dse: the base model's vocabulary has %d terms, D=%d requested", m.Space.Dim(), cfg.D)
	}
	data0 := m.inputs(texts)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xd5e))
	var curve []concept.Iteration
	x := data0
	for i := 0; i+1 < len(sizes); i++ {
		top := i+2 == len(sizes)
		if l, ok := opt.Base.reusable(i, sizes); ok && !top {
			m.layers = append(m.layers, l)
		} else {
			lr := cfg.PretrainLR
			if top {
				lr = cfg.GaussLR
			}
			r := newRBM(sizes[i], sizes[i+1], top, lr, cfg, rng)
			c, err := r.train(ctx, x, cfg.PretrainEpochs, cfg.Batch, fmt.Sprintf("rbm-%d", i+1), opt.Progress)
			curve = append(curve, c...)
			if err != nil {
				return nil, curve, err
			}
			m.layers = append(m.layers, r.l)
		}
		if !top {
			x = m.layers[i].up(x, true)
		}
	}
	return m, curve, nil
}

// reusable returns layer i of b when its shape matches sizes.
func (b *Model) reusable(i int, sizes []int) (layer, bool) {
	if b == nil || i >= len(b.layers) {
		return layer{}, false
	}
	in, out := b.layers[i].W.Dims()
	if in != sizes[i] || out != sizes[i+1] {
		return layer{}, false
	}
	for j := 0; j <= i; j++ { // every layer below must match too
		if b.Config.sizes()[j] != sizes[j] {
			return layer{}, false
		}
	}
	return b.layers[i], true
}

func allTexts(data concept.Data) []string {
	texts := append([]string(nil), data.Texts...)
	for _, l := range data.Lists {
		texts = append(texts, l.Query)
		texts = append(texts, l.Docs...)
	}
	return texts
}

// inputs returns the dense input matrix of texts (one row each).
func (m *Model) inputs(texts []string) *mat.Dense {
	d := m.Space.Dim()
	x := mat.NewDense(max(1, len(texts)), d, nil)
	for i, t := range texts {
		v := m.Input(t)
		row := x.RawRowView(i)
		for k, j := range v.Idx {
			row[j] = v.Val[k]
		}
	}
	return x
}

// Train pretrains (see Pretrain) and fine-tunes a DSE network.
func Train(ctx context.Context, data concept.Data, cfg Config, opt Options) (*Model, []concept.Iteration, error) {
	m, curve, err := Pretrain(ctx, data, cfg, opt)
	if err != nil {
		return nil, curve, err
	}
	ft, err := m.FineTune(ctx, data, opt)
	curve = append(curve, ft...)
	return m, curve, err
}

// triple indexes a (q, d+, d−) triple into a table of texts.
type triple struct{ q, pos, neg int }

// FineTune trains the whole network on triples with the margin ranking
// loss, keeping the weights with the best held-out map@10, then chooses
// the TF-IDF mixing weight when Config.Mix < 0.
func (m *Model) FineTune(ctx context.Context, data concept.Data, opt Options) ([]concept.Iteration, error) {
	cfg := m.Config
	if err := cfg.checkFinite(); err != nil {
		return nil, err
	}
	train, dev := data.Lists, opt.Dev
	if len(dev) == 0 {
		train, dev = concept.Split(data.Lists, cfg.DevFrac, cfg.Seed)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xf17e))
	texts, triples := buildTriples(train, data.Pairs, cfg.PairNegatives, rng)
	if len(triples) == 0 {
		return nil, concept.ErrNoSignal
	}
	x := m.inputs(texts)
	mixWanted := cfg.Mix
	m.Config.Mix = 0
	devScore := func() float64 {
		if len(dev) == 0 {
			return concept.NoDev
		}
		return concept.MAP(dev, m.dotScores(dev))
	}
	best, bestMAP := m.cloneLayers(), devScore()
	curve := []concept.Iteration{{Iter: 0, Phase: "finetune", Loss: m.tripleLoss(x, triples), DevMAP: bestMAP}}
	opt.Progress.Report(curve[0])
	vel := m.zeroGrads()
	since := 0
	for e := 1; e <= cfg.FineTuneEpochs; e++ {
		perm := rng.Perm(len(triples))
		if cfg.MaxTriples > 0 && len(perm) > cfg.MaxTriples {
			perm = perm[:cfg.MaxTriples]
		}
		var loss float64
		for lo := 0; lo < len(perm); lo += cfg.Batch {
			if err := ctx.Err(); err != nil {
				return curve, err
			}
			batch := make([]triple, 0, cfg.Batch)
			for _, p := range perm[lo:min(lo+cfg.Batch, len(perm))] {
				batch = append(batch, triples[p])
			}
			g := m.zeroGrads()
			loss += m.tripleGrad(x, batch, g)
			m.sgdStep(g, vel, float64(len(batch)))
		}
		it := concept.Iteration{Iter: e, Phase: "finetune", Loss: loss / float64(len(perm)), DevMAP: devScore()}
		curve = append(curve, it)
		opt.Progress.Report(it)
		if math.IsNaN(it.Loss) {
			return curve, errors.New("dse: fine-tuning diverged (loss is NaN); lower the learning rate")
		}
		if len(dev) == 0 || it.DevMAP > bestMAP {
			best, bestMAP, since = m.cloneLayers(), it.DevMAP, 0
		} else if since++; since >= cfg.Patience {
			break
		}
	}
	m.layers = best
	m.Config.Mix = mixWanted
	if mixWanted < 0 {
		m.Config.Mix = m.chooseMix(dev)
	}
	return curve, nil
}

// buildTriples returns the distinct texts and the triples over them: every
// candidate pair of a judged list with different grades, and each
// comparable pair (a, b) with negs random other pairs' b as d−.
func buildTriples(lists []concept.Judged, pairs []concept.Pair, negs int, rng *rand.Rand) ([]string, []triple) {
	var texts []string
	ids := map[string]int{}
	id := func(t string) int {
		if i, ok := ids[t]; ok {
			return i
		}
		ids[t] = len(texts)
		texts = append(texts, t)
		return len(texts) - 1
	}
	var out []triple
	for _, l := range lists {
		q := id(l.Query)
		for i := range l.Docs {
			for j := range l.Docs {
				if l.Grades[i] > l.Grades[j] {
					out = append(out, triple{q, id(l.Docs[i]), id(l.Docs[j])})
				}
			}
		}
	}
	if negs > 0 && len(pairs) > 1 {
		for i, p := range pairs {
			for range negs {
				j := rng.IntN(len(pairs) - 1)
				if j >= i {
					j++
				}
				if pairs[j].B != p.B {
					out = append(out, triple{id(p.A), id(p.B), id(pairs[j].B)})
				}
			}
		}
	}
	return texts, out
}

// gather returns the rows of x named by idx.
func gather(x *mat.Dense, idx []int) *mat.Dense {
	_, c := x.Dims()
	out := mat.NewDense(len(idx), c, nil)
	for i, j := range idx {
		out.SetRow(i, x.RawRowView(j))
	}
	return out
}

// grads holds one gradient (or momentum) per layer.
type grads struct {
	W []*mat.Dense
	C [][]float64
}

func (m *Model) zeroGrads() grads {
	var g grads
	for _, l := range m.layers {
		r, c := l.W.Dims()
		g.W = append(g.W, mat.NewDense(r, c, nil))
		g.C = append(g.C, make([]float64, c))
	}
	return g
}

// tripleGrad adds to g the gradient of the summed margin loss of batch
// and returns that loss.
func (m *Model) tripleGrad(x *mat.Dense, batch []triple, g grads) float64 {
	idx := [3][]int{}
	for _, t := range batch {
		idx[0] = append(idx[0], t.q)
		idx[1] = append(idx[1], t.pos)
		idx[2] = append(idx[2], t.neg)
	}
	var acts [3][]*mat.Dense
	for s := range 3 {
		acts[s] = m.forward(gather(x, idx[s]))
	}
	top := len(m.layers)
	q, p, n := acts[0][top], acts[1][top], acts[2][top]
	_, c := q.Dims()
	var d [3]*mat.Dense
	for s := range 3 {
		d[s] = mat.NewDense(len(batch), c, nil)
	}
	var loss float64
	for i := range batch {
		qi, pi, ni := q.RawRowView(i), p.RawRowView(i), n.RawRowView(i)
		f := 1 - concept.Dot(qi, pi) + concept.Dot(qi, ni)
		if f <= 0 {
			continue
		}
		loss += f
		// ∂f/∂Φ(q) = Φ(d−) − Φ(d+), ∂f/∂Φ(d+) = −Φ(q), ∂f/∂Φ(d−) = Φ(q) (eq. 19).
		dq, dp, dn := d[0].RawRowView(i), d[1].RawRowView(i), d[2].RawRowView(i)
		for j := range qi {
			dq[j] = ni[j] - pi[j]
			dp[j] = -qi[j]
			dn[j] = qi[j]
		}
	}
	for s := range 3 {
		m.backward(acts[s], d[s], g)
	}
	return loss
}

// backward adds to g the gradient given ∂L/∂Φ (dTop) for the activations
// of a forward pass (eqs. 21–25: Gaussian top, binary layers below).
func (m *Model) backward(acts []*mat.Dense, dTop *mat.Dense, g grads) {
	d := dTop
	for i := len(m.layers) - 1; i >= 0; i-- {
		if i < len(m.layers)-1 {
			h := acts[i+1].RawMatrix().Data
			dr := d.RawMatrix().Data
			for k := range dr {
				dr[k] *= h[k] * (1 - h[k])
			}
		}
		var gw mat.Dense
		gw.Mul(acts[i].T(), d)
		g.W[i].Add(g.W[i], &gw)
		r, c := d.Dims()
		for a := range r {
			row := d.RawRowView(a)
			for b := range c {
				g.C[i][b] += row[b]
			}
		}
		if i > 0 {
			var prev mat.Dense
			prev.Mul(d, m.layers[i].W.T())
			d = &prev
		}
	}
}

// sgdStep applies v ← m·v − ε(g/n + λW), W ← W + v (biases without decay).
func (m *Model) sgdStep(g, vel grads, n float64) {
	cfg := m.Config
	for i, l := range m.layers {
		var step mat.Dense
		step.Scale(1/n, g.W[i])
		var dec mat.Dense
		dec.Scale(cfg.WeightDecay, l.W)
		step.Add(&step, &dec)
		step.Scale(-cfg.FineTuneLR, &step)
		vel.W[i].Scale(cfg.Momentum, vel.W[i])
		vel.W[i].Add(vel.W[i], &step)
		l.W.Add(l.W, vel.W[i])
		for j := range l.C {
			vel.C[i][j] = cfg.Momentum*vel.C[i][j] - cfg.FineTuneLR*g.C[i][j]/n
			l.C[j] += vel.C[i][j]
		}
	}
}

// tripleLoss returns the mean margin loss over triples.
func (m *Model) tripleLoss(x *mat.Dense, triples []triple) float64 {
	g := m.zeroGrads()
	var loss float64
	for lo := 0; lo < len(triples); lo += 256 {
		loss += m.tripleGrad(x, triples[lo:min(lo+256, len(triples))], g)
	}
	return loss / float64(len(triples))
}

func (m *Model) cloneLayers() []layer {
	out := make([]layer, len(m.layers))
	for i, l := range m.layers {
		out[i] = layer{W: mat.DenseCopyOf(l.W), B: append([]float64(nil), l.B...), C: append([]float64(nil), l.C...)}
	}
	return out
}

// dotScores returns Φ(q)·Φ(d) for every candidate of every list.
func (m *Model) dotScores(lists []concept.Judged) [][]float64 {
	out := make([][]float64, len(lists))
	for i, l := range lists {
		acts := m.forward(m.inputs(append([]string{l.Query}, l.Docs...)))
		phi := acts[len(acts)-1]
		q := phi.RawRowView(0)
		out[i] = make([]float64, len(l.Docs))
		for j := range l.Docs {
			out[i][j] = concept.Dot(q, phi.RawRowView(j+1))
		}
	}
	return out
}

// chooseMix picks λ from a log grid by held-out map@10 (0 without
// held-out lists); ties go to the smaller λ.
func (m *Model) chooseMix(dev []concept.Judged) float64 {
	if len(dev) == 0 {
		return 0
	}
	dots := m.dotScores(dev)
	cos := make([][]float64, len(dev))
	for i, l := range dev {
		cos[i] = make([]float64, len(l.Docs))
		for j, d := range l.Docs {
			cos[i][j] = m.TFIDFCosine(l.Query, d)
		}
	}
	bestMix, bestMAP := 0.0, math.Inf(-1)
	for _, lam := range []float64{0, 0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000} {
		s := make([][]float64, len(dev))
		for i := range dev {
			s[i] = make([]float64, len(dots[i]))
			for j := range dots[i] {
				s[i][j] = dots[i][j] + lam*cos[i][j]
			}
		}
		if v := concept.MAP(dev, s); v > bestMAP {
			bestMix, bestMAP = lam, v
		}
	}
	return bestMix
}
