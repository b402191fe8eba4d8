package deepmatch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/models/lda"
)

// Progress reports one finished epoch of training.
type Progress struct {
	Epoch  int
	Loss   float64 // mean hinge loss over the epoch's triples
	DevMAP float64 // SemEval MAP (map@10) of the dev queries
	Best   bool    // the best dev MAP so far (the weights kept)
}

// encoded is a query with its encoded candidates.
type encoded struct {
	x     Input
	cands []Input
	pos   []int
	neg   []int
}

// triple indexes a training triple (x, y⁺, y⁻): query i, its candidate pos,
// and a negative that is either candidate neg of the query or, when random
// is true, document neg of the random pool.
type triple struct {
	q, pos, neg int
	random      bool
}

// Train fits a model of cfg.Method on train, choosing the epoch by dev MAP
// (early stopping). When dev is empty, every tenth training query is held
// out as dev; with fewer than ten training queries that leaves no dev
// query, and then every epoch runs and the last one is kept. progress,
// when non-nil, is called after the topic models are fitted (with Epoch 0)
// and after each epoch.
func Train(ctx context.Context, train, dev []Query, cfg Config, progress func(Progress)) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(train) == 0 {
		return nil, errors.New("deepmatch: no training queries")
	}
	for _, qs := range [][]Query{train, dev} {
		for _, q := range qs {
			if strings.TrimSpace(q.Text) == "" {
				return nil, fmt.Errorf("deepmatch: query %q has no text", q.ID)
			}
		}
	}
	if len(dev) == 0 {
		train, dev = holdOut(train, 10)
	}
	m := &Model{Config: cfg, Analyzer: analyzers.ID()}
	var xs, ys [][]string
	for _, q := range train {
		xs = append(xs, QueryTokens(q.Text, cfg.Meta))
		for _, c := range q.Cands {
			ys = append(ys, CandidateTokens(c.Text, c.Meta, cfg.Meta))
		}
	}
	m.VX, m.VY = NewVocab(xs, cfg.MinDF, cfg.MaxVocab), NewVocab(ys, cfg.MinDF, cfg.MaxVocab)
	if m.VX.Len() == 0 || m.VY.Len() == 0 {
		return nil, fmt.Errorf("deepmatch: empty vocabulary (%d query words, %d candidate words with df ≥ %d)", m.VX.Len(), m.VY.Len(), cfg.MinDF)
	}
	enc := m.encodeAll(train)
	var pool []Input // random negatives: every training candidate
	var owner []int
	for i, e := range enc {
		pool = append(pool, e.cands...)
		for range e.cands {
			owner = append(owner, i)
		}
	}
	var err error
	switch cfg.Method {
	case MethodDeepMatch:
		m.arch, err = buildArch(ctx, enc, m.VX.Len(), m.VY.Len(), cfg)
		if err != nil {
			return nil, err
		}
		m.net, err = NewNet(m.arch, cfg.shape(), cfg.Init, cfg.Seed)
		if err != nil {
			return nil, err
		}
	case MethodBilinear:
		m.net = NewBilinear(m.VX.Len(), m.VY.Len(), cfg.Dim, cfg.Init, cfg.Seed)
	case MethodSiamese:
		m.net = NewSiamese(m.VX.Len(), m.VY.Len(), cfg.Hidden, cfg.Dim, cfg.Init, cfg.Seed)
	}
	if progress != nil {
		progress(Progress{})
	}

	rng := rand.New(rand.NewPCG(cfg.Seed, 0x7a1))
	devEnc := m.encodeAll(dev)
	devQrels := Qrels(dev)
	devMAP := func() (float64, error) {
		run := dataset.NewRun()
		for i, q := range dev {
			for j, c := range q.Cands {
				s := m.net.Score(devEnc[i].x, devEnc[i].cands[j])
				if math.IsNaN(s) {
					return 0, fmt.Errorf("deepmatch: dev query %q: the score is NaN: training diverged; lower the learning rate or the initial weight scale", q.ID)
				}
				run.Add(q.ID, dataset.Entry{DocID: c.ID, Score: s, Rank: j + 1})
			}
		}
		res, err := eval.Evaluate(devQrels, run, eval.MustParseMetrics("map@10"))
		return res.Value("map@10"), err
	}
	ps := m.net.params()
	best, bad := -1.0, 0
	var bestW [][]float64
	for epoch := 1; epoch <= cfg.Epochs; epoch++ {
		ts := sampleTriples(enc, len(pool), owner, cfg, rng)
		if len(ts) == 0 {
			return nil, errors.New("deepmatch: no training triples (no query has both a relevant candidate and a negative)")
		}
		var loss float64
		for start := 0; start < len(ts); start += cfg.Batch {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			loss += batchGrad(m.net, enc, pool, ts[start:min(start+cfg.Batch, len(ts))], cfg.Margin)
			ps.step(cfg.LearningRate, cfg.L2)
		}
		dm, err := devMAP()
		if err != nil {
			return nil, err
		}
		p := Progress{Epoch: epoch, Loss: loss / float64(len(ts)), DevMAP: dm}
		if dm > best || len(dev) == 0 {
			best, bad, bestW, p.Best = dm, 0, ps.snapshot(), true
		} else {
			bad++
		}
		m.Curve = append(m.Curve, p)
		if progress != nil {
			progress(p)
		}
		if cfg.Patience > 0 && bad >= cfg.Patience {
			break
		}
	}
	ps.restore(bestW)
	m.DevMAP = best
	return m, nil
}

// batchGrad adds to net's gradients the gradient of the batch's mean hinge
// loss, (1/|batch|)·Σ max(0, margin + s(x,y⁻) − s(x,y⁺)), and returns the
// summed (not mean) loss.
func batchGrad(net matcher, enc []encoded, pool []Input, batch []triple, margin float64) float64 {
	var loss float64
	scale := 1 / float64(len(batch))
	for _, t := range batch {
		e := enc[t.q]
		yp, yn := e.cands[t.pos], t.negative(enc, pool)
		sp, stp := net.forward(e.x, yp)
		sn, stn := net.forward(e.x, yn)
		if l := margin + sn - sp; l > 0 {
			loss += l
			net.backward(e.x, yn, stn, scale)
			net.backward(e.x, yp, stp, -scale)
		}
	}
	return loss
}

// negative returns the triple's y⁻.
func (t triple) negative(enc []encoded, pool []Input) Input {
	if t.random {
		return pool[t.neg]
	}
	return enc[t.q].cands[t.neg]
}

// holdOut splits every k-th query off as dev.
func holdOut(qs []Query, k int) (train, dev []Query) {
	for i, q := range qs {
		if i%k == k-1 {
			dev = append(dev, q)
		} else {
			train = append(train, q)
		}
	}
	return train, dev
}

func (m *Model) encodeAll(qs []Query) []encoded {
	out := make([]encoded, len(qs))
	for i, q := range qs {
		e := encoded{x: m.VX.Encode(QueryTokens(q.Text, m.Config.Meta))}
		for j, c := range q.Cands {
			e.cands = append(e.cands, m.VY.Encode(CandidateTokens(c.Text, c.Meta, m.Config.Meta)))
			if c.Relevant {
				e.pos = append(e.pos, j)
			} else {
				e.neg = append(e.neg, j)
			}
		}
		out[i] = e
	}
	return out
}

// sampleTriples draws an epoch's triples, shuffled: for each relevant
// candidate, NegSameQuery negatives among the query's irrelevant candidates
// and NegRandom documents of other queries.
func sampleTriples(enc []encoded, poolSize int, owner []int, cfg Config, rng *rand.Rand) []triple {
	var ts []triple
	for i, e := range enc {
		for _, p := range e.pos {
			if len(e.neg) > 0 {
				for range cfg.NegSameQuery {
					ts = append(ts, triple{q: i, pos: p, neg: e.neg[rng.IntN(len(e.neg))]})
				}
			}
			for range cfg.NegRandom {
				if poolSize <= len(e.cands) {
					break // no other query's document to draw (its own may be relevant)
				}
				n := rng.IntN(poolSize)
				for owner[n] == i { // redraw until another query's document comes up
					n = rng.IntN(poolSize)
				}
				ts = append(ts, triple{q: i, pos: p, neg: n, random: true})
			}
		}
	}
	rng.Shuffle(len(ts), func(a, b int) { ts[a], ts[b] = ts[b], ts[a] })
	return ts
}

// buildArch fits the topic models on joint documents (a query and all its
// candidates) and derives the patches and the DAG.
func buildArch(ctx context.Context, enc []encoded, vx, vy int, cfg Config) (Arch, error) {
	c := lda.Corpus{VX: vx, VY: vy}
	for _, e := range enc {
		var d lda.Doc
		for _, w := range e.x.Idx {
			d.X = append(d.X, int(w))
		}
		for _, y := range e.cands {
			for _, w := range y.Idx {
				d.Y = append(d.Y, int(w))
			}
		}
		c.Docs = append(c.Docs, d)
	}
	levels := cfg.levels()
	tms, err := lda.FitResolutions(ctx, c, lda.Config{Iterations: cfg.LDAIterations, Seed: cfg.Seed}, levels, nil)
	if err != nil {
		return Arch{}, err
	}
	var a Arch
	for l, tm := range tms {
		ps := PatchesFromTopics(tm, cfg.PatchWords)
		if len(ps) == 0 {
			return Arch{}, fmt.Errorf("deepmatch: %d topics gave no patch", levels[l])
		}
		a.Levels = append(a.Levels, ps)
		if l == 0 {
			a.Children = append(a.Children, nil)
		} else {
			a.Children = append(a.Children, BuildDAG(a.Levels[l-1], ps, cfg.MinChildren))
		}
	}
	return a, nil
}
