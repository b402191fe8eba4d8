package tweak

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/semrank/semrank/eval"
)

// Experiment compares TWEAK under each loss with TF-IDF cosine and with the
// first-stage (IR) order on SemEval-style data: queries with judged
// candidate lists. Everything is chosen on training queries only: α on an
// inner dev split of them, the fusion weight on them.
type Experiment struct {
	Losses        []Loss
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
	return Experiment{Losses: Losses, InnerDev: 0.2, QueryLog: true, MaxIterations: 200, Seed: 2016}
}

// Systems compared, besides "tweak-<loss>" and "<system>+rank".
const (
	SysIR    = "ir-order"
	SysTFIDF = "tfidf"
)

// Outcome holds every system's test-query run and what was chosen per fold.
type Outcome struct {
	Qrels   eval.Qrels // judgments of the test queries
	Systems []string
	Runs    map[string]*eval.Run
	Chosen  []string // per fold: chosen α and λ, for the report
}

func newOutcome() *Outcome { return &Outcome{Qrels: eval.Qrels{}, Runs: map[string]*eval.Run{}} }

func (o *Outcome) add(sys string, set *Set, scores []float64) {
	r, ok := o.Runs[sys]
	if !ok {
		nr := eval.NewRun()
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
func (e Experiment) Split(ctx context.Context, train, test *eval.Dataset, df *DFTable) (*Outcome, error) {
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
func (e Experiment) CrossValidate(ctx context.Context, ds *eval.Dataset, k int, df *DFTable) (*Outcome, error) {
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

func judgedQueries(ds *eval.Dataset) ([]string, error) {
	if ds.Candidates == nil {
		return nil, ErrNoCandidates
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
	return shuffled(qids, e.Seed, salt)
}

func shuffled(qids []string, seed, salt uint64) []string {
	out := append([]string(nil), qids...)
	sort.Strings(out)
	rng := rand.New(rand.NewPCG(seed, salt))
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// HoldOut deals a seeded random fraction frac of qids (at least one) into
// dev and the rest into train: the inner split that chooses α when no dev
// set is given.
func HoldOut(qids []string, frac float64, seed uint64) (train, dev []string, err error) {
	s := shuffled(qids, seed, 1)
	n := max(1, int(math.Round(frac*float64(len(s)))))
	if n >= len(s) {
		return nil, nil, fmt.Errorf("tweak: %d queries leave none to train on after holding out %g for dev", len(s), frac)
	}
	return s[n:], s[:n], nil
}

// fold trains every system on trainQ and adds their runs over testQ.
func (e Experiment) fold(ctx context.Context, o *Outcome, name string, trainDS *eval.Dataset, trainQ []string, testDS *eval.Dataset, testQ []string, df *DFTable) error {
	st := Stats{DF: df}
	if e.QueryLog {
		texts := make([]string, len(trainQ))
		for i, q := range trainQ {
			qq, _ := trainDS.Query(q)
			texts[i] = qq.FullText()
		}
		st.QF = CountDF(texts)
	}
	// The inner split chooses α; the final model is retrained on all of
	// trainQ with it.
	innerQ, devQ, err := HoldOut(trainQ, e.InnerDev, e.Seed)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	sets := map[string]*Set{}
	for key, spec := range map[string]struct {
		ds    *eval.Dataset
		q     []string
		inLog bool
	}{
		"train": {trainDS, trainQ, true}, "inner": {trainDS, innerQ, true},
		"dev": {trainDS, devQ, true}, "test": {testDS, testQ, false},
	} {
		s, err := NewSet(spec.ds, spec.q, st, spec.inLog)
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
		cfg := Config{Loss: loss, QueryLog: e.QueryLog, MaxIterations: e.MaxIterations}
		chosen, _, err := SelectAlpha(ctx, sets["inner"], sets["dev"], cfg, e.Alphas, Options{})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		cfg.Alpha = chosen.Config.Alpha
		m, err := Train(ctx, train, cfg, Options{})
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
		o.add(s.name+"+rank", test, Fuse(test, s.scores, lambda))
	}
	o.Chosen = append(o.Chosen, strings.Join(notes, " "))
	return nil
}

// Fuse combines a stage's scores with the first-stage rank, per query:
// λ·z(score) + (1−λ)·z(−rank), z the z-score over the query's candidates
// (0 where a query's values are all equal).
func Fuse(set *Set, scores []float64, lambda float64) []float64 {
	out := make([]float64, len(scores))
	ranks := make([]float64, len(scores))
	for i, p := range set.pairs {
		ranks[i] = -float64(p.rank)
	}
	for _, q := range set.queries {
		zs, zr := zscore(scores[q.begin:q.end]), zscore(ranks[q.begin:q.end])
		for i := range zs {
			out[q.begin+i] = lambda*zs[i] + (1-lambda)*zr[i]
		}
	}
	return out
}

func zscore(x []float64) []float64 {
	var mean, sq float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sq += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(sq / float64(len(x)))
	out := make([]float64, len(x))
	if sd == 0 {
		return out
	}
	for i, v := range x {
		out[i] = (v - mean) / sd
	}
	return out
}

// tuneFusion picks λ by map@10 of the fused scores on the training queries
// (ties: the smaller λ, i.e. closer to the first-stage order).
func (e Experiment) tuneFusion(train *Set, scores []float64) (float64, error) {
	grid := e.FusionGrid
	if grid == nil {
		for i := 0; i <= 20; i++ {
			grid = append(grid, float64(i)/20)
		}
	}
	best, bestMAP := 0.0, math.Inf(-1)
	for _, l := range grid {
		r, err := train.Evaluate(Fuse(train, scores, l), DevMetrics[:1])
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
