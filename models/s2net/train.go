package s2net

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/lsa"
)

// Options are training inputs that are not configuration: they are not
// saved with the model.
type Options struct {
	// Dev are the held-out lists for early stopping; when empty, a
	// Config.DevFrac share of the training lists is held out.
	Dev []concept.Judged
	// Space, when set, is the vocabulary to use instead of one built from
	// the data (so several models can share it).
	Space *concept.Space
	// LSA, when set and Init is "lsa", is the starting projection; it must
	// be over Space and have at least Dim columns (the first Dim are used).
	LSA *lsa.Model
	// Weighter supplies input term weights instead of Config.Scheme.
	Weighter Weighter
	Progress concept.Progress
}

var errEarlyStop = errors.New("s2net: early stop")

// errDiverged is wrapped by the error for a training loss that is no
// longer finite.
var errDiverged = errors.New("the objective overflows; lower gamma or the pair weight")

// Bounds on the loss scale and the pair weight: far beyond them the loss
// overflows, and gonum's line search then fails on a non-finite step
// (a panic in its own goroutine, which no caller can recover).
const (
	maxGamma      = 1000
	maxPairWeight = 1e6
)

// Train learns an S2Net projection from data.
func Train(ctx context.Context, data concept.Data, cfg Config, opt Options) (*Model, []concept.Iteration, error) {
	cfg = cfg.withDefaults()
	if _, err := concept.ParseScheme(string(cfg.Scheme)); err != nil {
		return nil, nil, err
	}
	if cfg.Init != "lsa" && cfg.Init != "random" {
		return nil, nil, fmt.Errorf("s2net: unknown init %q (want lsa or random)", cfg.Init)
	}
	if !(cfg.Gamma <= maxGamma) {
		return nil, nil, fmt.Errorf("s2net: gamma %g: want at most %d (10 is the paper's)", cfg.Gamma, maxGamma)
	}
	if !(cfg.PairWeight <= maxPairWeight) || math.IsInf(cfg.PairWeight, -1) {
		return nil, nil, fmt.Errorf("s2net: pair weight %g: want a number at most %g", cfg.PairWeight, float64(maxPairWeight))
	}
	if math.IsNaN(cfg.DevFrac) || math.IsInf(cfg.DevFrac, 0) {
		// It would train and then fail to save the config.
		return nil, nil, fmt.Errorf("s2net: dev fraction %g: want a finite number", cfg.DevFrac)
	}
	if opt.Weighter != nil {
		cfg.WeighterID = opt.Weighter.ID()
	}
	train, dev := data.Lists, opt.Dev
	if len(dev) == 0 {
		train, dev = concept.Split(data.Lists, cfg.DevFrac, cfg.Seed)
	}
	space := opt.Space
	if space == nil {
		var err error
		if space, err = concept.BuildSpace(allTexts(data), cfg.Space); err != nil {
			return nil, nil, err
		}
	}
	m := &Model{Config: cfg, Space: space, weighter: opt.Weighter}
	obj, err := buildObjective(m, train, data.Pairs, cfg)
	if err != nil {
		return nil, nil, err
	}
	if m.A, err = initial(m, data, cfg, opt); err != nil {
		return nil, nil, err
	}

	devVecs := embedLists(m, dev)
	devMAP := func(a *mat.Dense) float64 {
		if len(dev) == 0 {
			return concept.NoDev
		}
		return concept.MAP(dev, devVecs.scores(a))
	}
	var curve []concept.Iteration
	var a0 *mat.Dense // the start, kept only for a refit
	if cfg.Refit && len(opt.Dev) == 0 {
		a0 = mat.DenseCopyOf(m.A)
	}
	bestIter := 0
	best := mat.DenseCopyOf(m.A)
	bestMAP := devMAP(m.A)
	it0 := concept.Iteration{Iter: 0, Phase: "lbfgs", Loss: obj.eval(m.A, nil), DevMAP: bestMAP}
	curve = append(curve, it0)
	opt.Progress.Report(it0)

	d, k := m.A.Dims()
	prob := obj.problem(d, k)
	iter, since := 0, 0
	rec := recorder(func(loc *optimize.Location, op optimize.Operation) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if op != optimize.MajorIteration {
			return nil
		}
		iter++
		if math.IsNaN(loc.F) || math.IsInf(loc.F, 0) {
			return fmt.Errorf("the training loss is %v at iteration %d: %w", loc.F, iter, errDiverged)
		}
		a := mat.NewDense(d, k, loc.X)
		it := concept.Iteration{Iter: iter, Phase: "lbfgs", Loss: loc.F, DevMAP: devMAP(a)}
		curve = append(curve, it)
		opt.Progress.Report(it)
		if len(dev) == 0 || it.DevMAP > bestMAP {
			best = mat.DenseCopyOf(a)
			bestMAP = it.DevMAP
			bestIter = iter
			since = 0
			return nil
		}
		if since++; since >= cfg.Patience {
			return errEarlyStop
		}
		return nil
	})
	settings := &optimize.Settings{MajorIterations: cfg.MaxIter, Recorder: rec}
	x0 := append([]float64(nil), m.A.RawMatrix().Data...)
	_, err = optimize.Minimize(prob, x0, settings, &optimize.LBFGS{Store: cfg.Store})
	if err != nil && !errors.Is(err, errEarlyStop) {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, curve, ctxErr
		}
		if errors.Is(err, errDiverged) {
			return nil, curve, fmt.Errorf("s2net: %w", err)
		}
		// L-BFGS failing a line search is an ordinary end of training: the
		// best matrix seen so far is kept.
		if iter == 0 && !isLinesearchFailure(err) {
			return nil, curve, fmt.Errorf("s2net: optimisation: %w", err)
		}
	}
	m.A = best
	if a0 != nil && len(dev) > 0 && bestIter > 0 {
		if m.A, err = refit(ctx, m, data, cfg, a0, bestIter); err != nil {
			return nil, curve, err
		}
	}
	return m, curve, nil
}

// refit trains m's projection again from a0 on every list of data for
// iters L-BFGS iterations, without early stopping.
func refit(ctx context.Context, m *Model, data concept.Data, cfg Config, a0 *mat.Dense, iters int) (*mat.Dense, error) {
	obj, err := buildObjective(m, data.Lists, data.Pairs, cfg)
	if err != nil {
		return nil, err
	}
	d, k := a0.Dims()
	prob := obj.problem(d, k)
	last := mat.DenseCopyOf(a0)
	rec := recorder(func(loc *optimize.Location, op optimize.Operation) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if op == optimize.MajorIteration {
			last = mat.NewDense(d, k, append([]float64(nil), loc.X...))
		}
		return nil
	})
	settings := &optimize.Settings{MajorIterations: iters, Recorder: rec}
	x0 := append([]float64(nil), a0.RawMatrix().Data...)
	if _, err := optimize.Minimize(prob, x0, settings, &optimize.LBFGS{Store: cfg.Store}); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if !isLinesearchFailure(err) {
			return nil, fmt.Errorf("s2net: refit: %w", err)
		}
	}
	return last, nil
}

func isLinesearchFailure(err error) bool {
	return err != nil && (errors.Is(err, optimize.ErrLinesearcherFailure) || errors.Is(err, optimize.ErrNoProgress))
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// recorder adapts a function to optimize.Recorder.
// problem returns the objective as an optimisation problem over d×k
// matrices in row-major order. L-BFGS asks for the loss and the gradient at
// the same point; both come from one evaluation, cached.
func (o *objective) problem(d, k int) optimize.Problem {
	var cache struct {
		x    []float64
		f    float64
		grad []float64
	}
	evalAt := func(x []float64) {
		if cache.x != nil && equal(cache.x, x) {
			return
		}
		cache.x = append(cache.x[:0], x...)
		cache.grad = make([]float64, len(x))
		cache.f = o.eval(mat.NewDense(d, k, cache.x), cache.grad)
	}
	return optimize.Problem{
		Func: func(x []float64) float64 { evalAt(x); return cache.f },
		Grad: func(g, x []float64) { evalAt(x); copy(g, cache.grad) },
	}
}

type recorder func(*optimize.Location, optimize.Operation) error

func (recorder) Init() error { return nil }
func (r recorder) Record(loc *optimize.Location, op optimize.Operation, _ *optimize.Stats) error {
	return r(loc, op)
}

func allTexts(data concept.Data) []string {
	texts := append([]string(nil), data.Texts...)
	for _, l := range data.Lists {
		texts = append(texts, l.Query)
		texts = append(texts, l.Docs...)
	}
	return texts
}

// initial returns the starting projection.
func initial(m *Model, data concept.Data, cfg Config, opt Options) (*mat.Dense, error) {
	d := m.Space.Dim()
	if cfg.Dim > d {
		return nil, fmt.Errorf("s2net: %d dimensions requested but the vocabulary has %d terms", cfg.Dim, d)
	}
	if cfg.Init == "random" {
		rng := rand.New(rand.NewPCG(cfg.Seed, 0x52))
		a := mat.NewDense(d, cfg.Dim, nil)
		raw := a.RawMatrix().Data
		for i := range raw {
			raw[i] = rng.NormFloat64() / math.Sqrt(float64(d))
		}
		return a, nil
	}
	l := opt.LSA
	if l == nil {
		texts := allTexts(data)
		docs := make([]concept.Sparse, len(texts))
		for i, t := range texts {
			docs[i] = m.Features(t)
		}
		var err error
		if l, err = lsa.Fit(m.Space, docs, cfg.LSA); err != nil {
			return nil, fmt.Errorf("s2net: LSA initialisation: %w", err)
		}
	}
	if l.Space.Hash() != m.Space.Hash() {
		return nil, errors.New("s2net: the LSA initialisation uses a different vocabulary")
	}
	if l.Dim() < cfg.Dim {
		return nil, fmt.Errorf("s2net: the LSA initialisation has %d dimensions, need %d", l.Dim(), cfg.Dim)
	}
	return mat.DenseCopyOf(l.Proj.Slice(0, d, 0, cfg.Dim)), nil
}

// buildObjective turns judged lists into preference pairs and comparable
// pairs into blocks, over deduplicated term vectors.
func buildObjective(m *Model, lists []concept.Judged, pairs []concept.Pair, cfg Config) (*objective, error) {
	o := &objective{d: m.Space.Dim(), k: cfg.Dim, gamma: cfg.Gamma, workers: concept.Workers(cfg.Workers)}
	ids := map[string]int{}
	vec := func(text string) int {
		if i, ok := ids[text]; ok {
			return i
		}
		f := m.Features(text)
		if f.Len() == 0 {
			ids[text] = -1
			return -1
		}
		ids[text] = len(o.vecs)
		o.vecs = append(o.vecs, f)
		return len(o.vecs) - 1
	}
	for _, l := range lists {
		q := vec(l.Query)
		if q < 0 {
			continue
		}
		for i := range l.Docs {
			for j := range l.Docs {
				if l.Grades[i] <= l.Grades[j] {
					continue
				}
				pos, neg := vec(l.Docs[i]), vec(l.Docs[j])
				if pos >= 0 && neg >= 0 {
					o.prefs = append(o.prefs, pref{q, pos, neg})
				}
			}
		}
	}
	if cfg.PairWeight > 0 && len(pairs) > 0 {
		order := rand.New(rand.NewPCG(cfg.Seed, 0xb10c)).Perm(len(pairs))
		var links []link
		for _, p := range order {
			if cfg.MaxPairs > 0 && len(links) >= cfg.MaxPairs {
				break
			}
			a, b := vec(pairs[p].A), vec(pairs[p].B)
			if a >= 0 && b >= 0 && a != b {
				links = append(links, link{a, b})
			}
		}
		nb := (len(links) + cfg.Block - 1) / cfg.Block
		comparisons := 0
		for i := range nb {
			blk := links[i*len(links)/nb : (i+1)*len(links)/nb]
			if len(blk) < 2 {
				continue
			}
			o.blocks = append(o.blocks, blk)
			comparisons += 2 * len(blk) * (len(blk) - 1)
		}
		if comparisons > 0 {
			o.wLink = cfg.PairWeight / float64(comparisons)
		}
	}
	if len(o.prefs) > 0 {
		o.wPref = 1 / float64(len(o.prefs))
	}
	if len(o.prefs) == 0 && len(o.blocks) == 0 {
		return nil, concept.ErrNoSignal
	}
	return o, nil
}

// listVecs holds the term vectors of held-out lists, computed once.
type listVecs struct {
	q    []concept.Sparse
	docs [][]concept.Sparse
}

func embedLists(m *Model, lists []concept.Judged) listVecs {
	var v listVecs
	for _, l := range lists {
		v.q = append(v.q, m.Features(l.Query))
		ds := make([]concept.Sparse, len(l.Docs))
		for j, d := range l.Docs {
			ds[j] = m.Features(d)
		}
		v.docs = append(v.docs, ds)
	}
	return v
}

// scores returns the cosine scores of every list under projection a.
func (v listVecs) scores(a *mat.Dense) [][]float64 {
	out := make([][]float64, len(v.q))
	for i, q := range v.q {
		gq := concept.Project(a, q)
		out[i] = make([]float64, len(v.docs[i]))
		for j, d := range v.docs[i] {
			out[i][j] = concept.Cosine(gq, concept.Project(a, d))
		}
	}
	return out
}
