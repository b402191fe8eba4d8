package tweakexp

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/models/tweak"
)

// Experiment compares TWEAK under each loss with TF-IDF cosine and with the
// first-stage (IR) order on SemEval-style data: queries with judged
// candidate lists. Everything is chosen on training queries only: α on an
// inner dev split of them, the fusion weight on them.
type Experiment struct {
	Losses        []tweak.Loss
	Alphas        []float64 // α grid; nil means AlphaGrid
	InnerDev      float64   // fraction of training queries held out to choose α
	QueryLog      bool      // use the training queries as a query log
	MaxIterations int
	Seed          uint64    // query shuffles (folds, inner dev split)
	FusionGrid    []float64 // weights λ of the stage in fusion; nil means 0, 0.05, …, 1
	// Progress, when set, is told what is being trained.
	Progress func(msg string)
}

// DefaultExperiment is the protocol of the TWEAK experiment in
// docs/RESULTS.md (docs/results/tweak-dev.md, tweak-cv.md).
func DefaultExperiment() Experiment {
	return Experiment{Losses: tweak.Losses, InnerDev: 0.2, QueryLog: true, MaxIterations: 200, Seed: 2016}
}

// Systems compared, besides "tweak-<loss>" and "<system>+rank".
const (
	SysIR    = "ir-order"
	SysTFIDF = "tfidf"
)

// Outcome holds every system's test-query run and what was chosen per fold.
type Outcome struct {
	Qrels   dataset.Qrels // judgments of the test queries
	Systems []string
	Runs    map[string]*dataset.Run
	Chosen  []string // per fold: chosen α and λ, for the report
}

func newOutcome() *Outcome { return &Outcome{Qrels: dataset.Qrels{}, Runs: map[string]*dataset.Run{}} }

func (o *Outcome) add(sys string, set *tweak.Set, scores []float64) {
	r, ok := o.Runs[sys]
	if !ok {
		nr := dataset.NewRun()
		r = &nr
		o.Runs[sys] = r
		o.Systems = append(o.Systems, sys)
	}
	part := set.Run(scores)
	for _, q := range part.QueryIDs() {
		r.Set(q, part.Ranking(q))
	}
}

// Split trains on every judged query of train and tests on every judged
// query of test, with document frequencies df.
func (e Experiment) Split(ctx context.Context, train, test *dataset.Dataset, df *tweak.DFTable) (*Outcome, error) {
	o := newOutcome()
	trainQ, err := judgedQueries(train)
	if err != nil {
		return nil, err
	}
	testQ, err := judgedQueries(test)
	if err != nil {
		return nil, err
	}
	if err := e.fold(ctx, o, "dev", train, trainQ, test, testQ, df); err != nil {
		return nil, err
	}
	return o, nil
}

// CrossValidate runs k-fold cross-validation over the judged queries of
// ds: queries are shuffled with e.Seed and dealt into k folds, all of a
// query's candidates staying in its fold.
func (e Experiment) CrossValidate(ctx context.Context, ds *dataset.Dataset, k int, df *tweak.DFTable) (*Outcome, error) {
	qids, err := judgedQueries(ds)
	if err != nil {
		return nil, err
	}
	if k < 2 || k > len(qids) {
		return nil, fmt.Errorf("tweak: %d folds for %d queries", k, len(qids))
	}
	shuffled := e.shuffle(qids, 0)
	o := newOutcome()
	for f := 0; f < k; f++ {
		var trainQ, testQ []string
		for i, q := range shuffled {
			if i%k == f {
				testQ = append(testQ, q)
			} else {
				trainQ = append(trainQ, q)
			}
		}
		if err := e.fold(ctx, o, fmt.Sprintf("fold %d", f+1), ds, trainQ, ds, testQ, df); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func judgedQueries(ds *dataset.Dataset) ([]string, error) {
	if ds.Candidates == nil {
		return nil, tweak.ErrNoCandidates
	}
	var out []string
	for _, q := range ds.Candidates.QueryIDs() {
		if ds.Qrels[q] != nil {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("tweak: %s: no judged query has candidates", ds.Dir)
	}
	return out, nil
}

func (e Experiment) shuffle(qids []string, salt uint64) []string {
	return tweak.Shuffled(qids, e.Seed, salt)
}

// fold trains every system on trainQ and adds their runs over testQ.
func (e Experiment) fold(ctx context.Context, o *Outcome, name string, trainDS *dataset.Dataset, trainQ []string, testDS *dataset.Dataset, testQ []string, df *tweak.DFTable) error {
	st := tweak.Stats{DF: df}
	if e.QueryLog {
		texts := make([]string, len(trainQ))
		for i, q := range trainQ {
			qq, _ := trainDS.Query(q)
			texts[i] = qq.FullText()
		}
		st.QF = tweak.CountDF(texts)
	}
	// The inner split chooses α; the final model is retrained on all of
	// trainQ with it.
	innerQ, devQ, err := tweak.HoldOut(trainQ, e.InnerDev, e.Seed)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	sets := map[string]*tweak.Set{}
	for key, spec := range map[string]struct {
		ds    *dataset.Dataset
		q     []string
		inLog bool
	}{
		"train": {trainDS, trainQ, true}, "inner": {trainDS, innerQ, true},
		"dev": {trainDS, devQ, true}, "test": {testDS, testQ, false},
	} {
		s, err := tweak.NewSet(spec.ds, spec.q, st, spec.inLog)
		if err != nil {
			return err
		}
		sets[key] = s
	}
	train, test := sets["train"], sets["test"]
	for q := range test.Qrels() {
		o.Qrels[q] = test.Qrels()[q]
	}
	o.add(SysIR, test, test.RankScores())
	notes := []string{name + ":"}
	systems := []struct {
		name          string
		train, scores []float64
	}{{SysTFIDF, train.TFIDFScores(), test.TFIDFScores()}}
	for _, loss := range e.Losses {
		if e.Progress != nil {
			e.Progress(fmt.Sprintf("%s: training %s", name, loss))
		}
		cfg := tweak.Config{Loss: loss, QueryLog: e.QueryLog, MaxIterations: e.MaxIterations}
		chosen, _, err := tweak.SelectAlpha(ctx, sets["inner"], sets["dev"], cfg, e.Alphas, tweak.Options{})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		cfg.Alpha = chosen.Config.Alpha
		m, err := tweak.Train(ctx, train, cfg, tweak.Options{})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		notes = append(notes, fmt.Sprintf("%s α=%g", loss, cfg.Alpha))
		systems = append(systems, struct {
			name          string
			train, scores []float64
		}{"tweak-" + string(loss), train.Scores(m.W), test.Scores(m.W)})
	}
	for _, s := range systems {
		o.add(s.name, test, s.scores)
	}
	for _, s := range systems {
		lambda, err := e.tuneFusion(train, s.train)
		if err != nil {
			return err
		}
		notes = append(notes, fmt.Sprintf("%s+rank λ=%.2f", s.name, lambda))
		o.add(s.name+"+rank", test, tweak.Fuse(test, s.scores, lambda))
	}
	o.Chosen = append(o.Chosen, strings.Join(notes, " "))
	return nil
}

// tuneFusion picks λ by map@10 of the fused scores on the training queries
// (ties: the smaller λ, i.e. closer to the first-stage order).
func (e Experiment) tuneFusion(train *tweak.Set, scores []float64) (float64, error) {
	grid := e.FusionGrid
	if grid == nil {
		for i := 0; i <= 20; i++ {
			grid = append(grid, float64(i)/20)
		}
	}
	best, bestMAP := 0.0, math.Inf(-1)
	for _, l := range grid {
		r, err := train.Evaluate(tweak.Fuse(train, scores, l), tweak.DevMetrics[:1])
		if err != nil {
			return 0, err
		}
		if r.Mean[0] > bestMAP+1e-12 {
			best, bestMAP = l, r.Mean[0]
		}
	}
	return best, nil
}

// ReportMetrics are the metrics an experiment reports.
var ReportMetrics = eval.MustParseMetrics("map@10,auc,mrr@10,p@1")

// Comparisons are the paired tests a report makes: system vs baseline.
func (o *Outcome) Comparisons() [][2]string {
	var out [][2]string
	for _, s := range o.Systems {
		switch {
		case strings.HasPrefix(s, "tweak-") && !strings.HasSuffix(s, "+rank"):
			out = append(out, [2]string{s, SysTFIDF})
		case strings.HasSuffix(s, "+rank"):
			out = append(out, [2]string{s, SysIR})
		}
	}
	return out
}

// WriteMarkdown writes the metric table and the paired tests.
func (o *Outcome) WriteMarkdown(w io.Writer) error {
	res := map[string]eval.Result{}
	for _, s := range o.Systems {
		r, err := eval.Evaluate(o.Qrels, *o.Runs[s], ReportMetrics)
		if err != nil {
			return err
		}
		res[s] = r
	}
	fmt.Fprintf(w, "%d queries.\n\n| system |", len(o.Qrels))
	for _, m := range ReportMetrics {
		fmt.Fprintf(w, " %s |", m)
	}
	fmt.Fprint(w, "\n|---|")
	for range ReportMetrics {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, s := range o.Systems {
		fmt.Fprintf(w, "| %s |", s)
		for _, v := range res[s].Mean {
			fmt.Fprintf(w, " %.4f |", v)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\nPaired tests (two-sided; t-test and sign-flip randomization, 20000 trials):")
	fmt.Fprintln(w, "\n| system | baseline | metric | system | baseline | Δ | p (t) | p (rand) | better/worse queries |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, c := range o.Comparisons() {
		for mi, m := range ReportMetrics[:2] {
			cmp, err := eval.Compare(res[c[0]].Column(mi), res[c[1]].Column(mi))
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "| %s | %s | %s | %.4f | %.4f | %+.4f | %.3g | %.3g | %d/%d |\n",
				c[0], c[1], m, cmp.MeanA, cmp.MeanB, cmp.Delta, cmp.PTTest, cmp.PRandom, cmp.Improved, cmp.Hurt)
		}
	}
	fmt.Fprintln(w, "\nChosen on training queries only:")
	fmt.Fprintln(w)
	for _, c := range o.Chosen {
		fmt.Fprintf(w, "- %s\n", c)
	}
	return nil
}
