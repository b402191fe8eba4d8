package tweak

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/optimize"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/eval"
)

// Config is what a model was trained with; it is stored in the bundle.
type Config struct {
	Loss  Loss    `json:"loss"`
	Alpha float64 `json:"alpha"` // L2 weight: the loss gets α/2·‖w‖²
	// QueryLog enables the query-log frequency feature, counted over the
	// training queries.
	QueryLog      bool `json:"query_log"`
	MaxIterations int  `json:"max_iterations"`
}

// DefaultConfig is the configuration the paper found best: the preference
// loss, with α from its grid.
func DefaultConfig() Config {
	return Config{Loss: LossPreference, Alpha: 0.1, QueryLog: true, MaxIterations: 200}
}

// AlphaGrid is the paper's grid of regularisation weights (Sec. 4.1.3).
var AlphaGrid = []float64{0.003, 0.01, 0.03, 0.1, 0.3, 1}

// InitialWeights is where L-BFGS starts: weight softplus(1 + log(tf+1)),
// a damped term frequency, positive for every term, so every text has a
// non-zero vector and the log loss is defined from the first step.
func InitialWeights() []float64 {
	w := make([]float64, NumFeatures)
	w[FeatBias] = 1
	w[FeatLogTF] = 1
	return w
}

// Progress reports one L-BFGS iteration.
type Progress struct {
	Iteration int
	Loss      float64
	DevMAP    float64 // map@10 on the dev set; NaN without one
}

// Options are the optional parts of training.
type Options struct {
	Dev      *Set           // evaluated each iteration and at the end
	Progress func(Progress) // called after each iteration
}

// DevMetrics are the metrics recorded for a dev set.
var DevMetrics = eval.MustParseMetrics("map@10,auc,mrr@10")

// Train fits a model to the judged pairs of train with L-BFGS.
func Train(ctx context.Context, train *Set, cfg Config, opt Options) (*Model, error) {
	if _, err := ParseLoss(string(cfg.Loss)); err != nil {
		return nil, err
	}
	if !(cfg.Alpha >= 0) || math.IsInf(cfg.Alpha, 0) {
		return nil, fmt.Errorf("tweak: alpha %v must be finite and non-negative", cfg.Alpha)
	}
	if cfg.QueryLog != (train.stats.QF != nil) {
		return nil, errors.New("tweak: config.QueryLog does not match whether the training set has a query log")
	}
	if !slices.ContainsFunc(train.pairs, func(p pair) bool { return p.judged }) {
		// Every loss reads judged candidates only; without one the
		// weights would be the regulariser's alone.
		return nil, errors.New("tweak: no judged candidates to train on")
	}
	if cfg.Loss == LossPreference && len(train.prefs) == 0 {
		// Candidates not judged are in the lists but in no pair.
		return nil, errors.New("tweak: no preference pairs: in every query the judged candidates share one grade " +
			"(candidates not judged are left out of the losses: judge some not relevant, grade 0, or count every one not judged so with dataset.Dataset.WithUnjudgedNotRelevant)")
	}
	if cfg.MaxIterations <= 0 {
		cfg.MaxIterations = DefaultConfig().MaxIterations
	}
	p := optimize.Problem{
		Func: func(w []float64) float64 { return train.objective(w, nil, cfg.Loss, cfg.Alpha) },
		Grad: func(grad, w []float64) { train.objective(w, grad, cfg.Loss, cfg.Alpha) },
	}
	rec := &recorder{ctx: ctx, dev: opt.Dev, progress: opt.Progress}
	settings := &optimize.Settings{
		MajorIterations:   cfg.MaxIterations,
		GradientThreshold: 1e-7,
		Converger:         &optimize.FunctionConverge{Absolute: 1e-9, Relative: 1e-9, Iterations: 20},
		Recorder:          rec,
	}
	res, err := optimize.Minimize(p, InitialWeights(), settings, &optimize.LBFGS{})
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if res == nil || !finite(res.X) {
		return nil, fmt.Errorf("tweak: L-BFGS failed: %v", err)
	}
	// A line search that cannot improve further ends the run with an error
	// but a usable, best-so-far location; anything else is a failure.
	if err != nil && !errors.Is(err, optimize.ErrLinesearcherFailure) && !errors.Is(err, optimize.ErrNoProgress) {
		return nil, fmt.Errorf("tweak: L-BFGS: %w", err)
	}
	m := &Model{Config: cfg, W: res.X, DF: train.stats.DF, QF: train.stats.QF, Fingerprint: train.fp, Analyzer: analyzers.ID()}
	if opt.Dev != nil {
		r, err := opt.Dev.Evaluate(opt.Dev.Scores(m.W), DevMetrics)
		if err != nil {
			return nil, err
		}
		m.Metrics = map[string]float64{}
		for i, mt := range r.Metrics {
			m.Metrics["dev_"+mt.String()] = r.Mean[i]
		}
	}
	return m, nil
}

func finite(x []float64) bool {
	if len(x) == 0 {
		return false
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// recorder reports major iterations and stops the run when ctx is done.
type recorder struct {
	ctx      context.Context
	dev      *Set
	progress func(Progress)
}

func (r *recorder) Init() error { return nil }

func (r *recorder) Record(loc *optimize.Location, op optimize.Operation, st *optimize.Stats) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	if op != optimize.MajorIteration || r.progress == nil {
		return nil
	}
	p := Progress{Iteration: st.MajorIterations, Loss: loc.F, DevMAP: math.NaN()}
	if r.dev != nil {
		if res, err := r.dev.Evaluate(r.dev.Scores(loc.X), DevMetrics[:1]); err == nil {
			p.DevMAP = res.Mean[0]
		}
	}
	r.progress(p)
	return nil
}

// AlphaResult is one point of an α search.
type AlphaResult struct {
	Alpha  float64
	DevMAP float64
	DevAUC float64
}

// SelectAlpha trains one model per α on train and returns the one with the
// best dev map@10 (ties: the larger dev AUC, then the smaller α), with
// every point of the search.
func SelectAlpha(ctx context.Context, train, dev *Set, cfg Config, alphas []float64, opt Options) (*Model, []AlphaResult, error) {
	if dev == nil {
		return nil, nil, errors.New("tweak: choosing alpha needs a dev set")
	}
	if len(alphas) == 0 {
		alphas = AlphaGrid
	}
	opt.Dev = dev
	var best *Model
	var table []AlphaResult
	for _, a := range alphas {
		c := cfg
		c.Alpha = a
		m, err := Train(ctx, train, c, opt)
		if err != nil {
			return nil, nil, fmt.Errorf("tweak: alpha %g: %w", a, err)
		}
		r := AlphaResult{Alpha: a, DevMAP: m.Metrics["dev_map@10"], DevAUC: m.Metrics["dev_auc"]}
		table = append(table, r)
		if best == nil || r.DevMAP > best.Metrics["dev_map@10"] ||
			(r.DevMAP == best.Metrics["dev_map@10"] && r.DevAUC > best.Metrics["dev_auc"]) {
			best = m
		}
	}
	return best, table, nil
}
