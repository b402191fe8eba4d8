package unsupexp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/ssg"
	"github.com/semrank/semrank/models/wmd"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/offline"
	"github.com/semrank/semrank/rerank/stages"
)

// Candidate is one document to rerank for a query.
type Candidate struct {
	ID, Text string
	Rank     int     // first-stage rank, 1-based
	Score    float64 // first-stage score
}

// Lists maps each query to its candidates in first-stage order.
type Lists map[string][]Candidate

// Missing returns how many of the queries qrels judges have no candidates
// in l (no searchable terms, nothing retrieved, an empty given list):
// every system ranks nothing for them and they count 0 in every row.
func (l Lists) Missing(qrels dataset.Qrels) int {
	n := 0
	for qid := range qrels {
		if len(l[qid]) == 0 {
			n++
		}
	}
	return n
}

// GivenLists returns the dataset's given candidate lists (SemEval).
func GivenLists(ds *dataset.Dataset) (Lists, error) {
	if ds.Candidates == nil {
		return nil, fmt.Errorf("%s has no candidates.trec", ds.Dir)
	}
	out := Lists{}
	for _, q := range ds.Queries {
		for i, e := range ds.Candidates.Ranking(q.ID) {
			d, ok := ds.Doc(e.DocID)
			if !ok {
				return nil, fmt.Errorf("candidate %q of %q not in corpus", e.DocID, q.ID)
			}
			out[q.ID] = append(out[q.ID], Candidate{ID: d.ID, Text: d.FullText(), Rank: i + 1, Score: e.Score})
		}
	}
	return out, nil
}

// Stats are collection statistics over index terms (analyzers.Tokens) for
// the lexical baselines.
type Stats struct {
	N      float64
	DF     map[string]float64
	AvgLen float64
}

// CorpusStats counts document frequencies over a corpus.
func CorpusStats(corpus []dataset.Doc) Stats {
	st := Stats{DF: map[string]float64{}}
	var total float64
	for _, d := range corpus {
		toks := analyzers.Tokens(d.FullText())
		total += float64(len(toks))
		seen := map[string]bool{}
		for _, t := range toks {
			if !seen[t] {
				seen[t] = true
				st.DF[t]++
			}
		}
	}
	st.N = float64(len(corpus))
	if st.N > 0 {
		st.AvgLen = total / st.N
	}
	return st
}

func tf(text string) (map[string]float64, float64) {
	out := map[string]float64{}
	toks := analyzers.Tokens(text)
	for _, t := range toks {
		out[t]++
	}
	return out, float64(len(toks))
}

// TFIDFCosine is the cosine of (1+log tf)·idf vectors.
func (st Stats) TFIDFCosine(q, d string) float64 {
	vec := func(text string) map[string]float64 {
		c, _ := tf(text)
		for t, n := range c {
			c[t] = (1 + math.Log(n)) * math.Log((st.N+1)/(st.DF[t]+0.5))
		}
		return c
	}
	return stages.Cosine(vec(q), vec(d))
}

// BM25 is textbook Okapi BM25 (k1 = 1.2, b = 0.75, idf = log(1 + (N − df
// + 0.5)/(df + 0.5))) over the collection statistics.
func (st Stats) BM25(q, d string) float64 {
	qt, _ := tf(q)
	dt, dl := tf(d)
	const k1, b = 1.2, 0.75
	var s float64
	for t := range qt {
		f := dt[t]
		if f == 0 {
			continue
		}
		df := st.DF[t]
		idf := math.Log(1 + (st.N-df+0.5)/(df+0.5))
		s += idf * f * (k1 + 1) / (f + k1*(1-b+b*dl/st.AvgLen))
	}
	return s
}

// Scorer scores a query's candidates; higher is better.
type Scorer func(ctx context.Context, query string, cands []Candidate) ([]float64, error)

// System is a named scorer.
type System struct {
	Name  string
	Score Scorer
}

// Convergence counts the SSG-WD propagations (one per query) whose largest
// label change fell below the tolerance within the iteration limit; the
// others stopped at the limit, where labels may still swing.
type Convergence struct{ Converged, Total int }

// SystemNames returns the names of the systems Systems returns, in order.
func SystemNames() []string {
	return []string{"IR order", "TF-IDF cosine", "BM25 (textbook)", "WMD", "SSG-WD", "SSG-D"}
}

// Systems returns the compared systems: first-stage order, TF-IDF cosine,
// BM25, WMD (negative distance), SSG-WD and SSG-D. conv, when not nil,
// counts how many SSG-WD propagations converged.
func Systems(st Stats, space *wmd.Space, wd, d *ssg.Model, conv *Convergence) []System {
	names := SystemNames()
	pairwise := func(f func(q, d string) float64) Scorer {
		return func(_ context.Context, q string, cands []Candidate) ([]float64, error) {
			out := make([]float64, len(cands))
			for i, c := range cands {
				out[i] = f(q, c.Text)
			}
			return out, nil
		}
	}
	// SSG-WD and SSG-D differ only in propagation: build each query's
	// graph once (WMD edges dominate the cost) and propagate twice; the
	// graphs of all queries are kept, since systems run one after another.
	graphs := map[string]*ssg.Graph{}
	ssgScorer := func(m *ssg.Model) Scorer {
		return func(ctx context.Context, q string, cands []Candidate) ([]float64, error) {
			key := q + "\x00" + strings.Join(texts(cands), "\x00")
			g, ok := graphs[key]
			if !ok {
				var err error
				if g, err = wd.Build(ctx, q, texts(cands)); err != nil {
					return nil, err
				}
				graphs[key] = g
			}
			lab, it := g.Propagate(m.Config)
			if m.Config.Dropout == 0 && conv != nil {
				conv.Total++
				if it < m.Config.MaxIter {
					conv.Converged++
				}
			}
			return g.LabelScores(lab), nil
		}
	}
	return []System{
		{names[0], func(_ context.Context, _ string, cands []Candidate) ([]float64, error) {
			out := make([]float64, len(cands))
			for i, c := range cands {
				out[i] = -float64(c.Rank)
			}
			return out, nil
		}},
		{names[1], pairwise(st.TFIDFCosine)},
		{names[2], pairwise(st.BM25)},
		{names[3], func(_ context.Context, q string, cands []Candidate) ([]float64, error) {
			qd := space.Doc(q)
			if qd.Empty() {
				// Every distance would be +Inf and every candidate tie:
				// first-stage order, which Run counts as a fallback, as
				// for SSG, rather than a WMD ranking.
				return nil, ssg.ErrEmptyQuery
			}
			out := make([]float64, len(cands))
			for i, c := range cands {
				v, err := space.WMD(qd, space.Doc(c.Text))
				if err != nil {
					return nil, err
				}
				out[i] = -v
			}
			return NegInfLast(out), nil
		}},
		{names[4], ssgScorer(wd)},
		{names[5], ssgScorer(d)},
	}
}

func texts(cands []Candidate) []string {
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.Text
	}
	return out
}

// NegInfLast replaces −Inf scores (empty documents) with a finite score
// below every other, so fusion and sorting stay well defined.
func NegInfLast(s []float64) []float64 {
	lo := 0.0
	for _, x := range s {
		if !math.IsInf(x, -1) {
			lo = min(lo, x)
		}
	}
	for i, x := range s {
		if math.IsInf(x, -1) {
			s[i] = lo - 1
		}
	}
	return s
}

// Run scores every query's candidates with one system. A query the
// system cannot rank (ssg.ErrEmptyQuery: no word with a vector) keeps its
// first-stage order and is counted; any other error, such as a failed
// transport solve, stops the run naming the query, rather than passing a
// broken system off as one that kept the first stage's order.
func Run(ctx context.Context, queries []dataset.Query, lists Lists, sys System) (dataset.Run, int, error) {
	run := dataset.NewRun()
	fallbacks := 0
	for _, q := range queries {
		cands := lists[q.ID]
		if len(cands) == 0 {
			continue
		}
		scores, err := sys.Score(ctx, q.FullText(), cands)
		if err != nil {
			if ctx.Err() != nil {
				// Stopped, not failed: the caller (semrank's main)
				// reports an interrupt by this error alone.
				return run, 0, err
			}
			if !errors.Is(err, ssg.ErrEmptyQuery) {
				return run, 0, fmt.Errorf("%s, query %s: %w", sys.Name, q.ID, err)
			}
			fallbacks++
			scores = make([]float64, len(cands))
			for i, c := range cands {
				scores[i] = -float64(c.Rank)
			}
		}
		order := make([]int, len(cands))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool {
			if scores[order[a]] != scores[order[b]] {
				return scores[order[a]] > scores[order[b]]
			}
			return cands[order[a]].Rank < cands[order[b]].Rank
		})
		for r, i := range order {
			run.Add(q.ID, dataset.Entry{DocID: cands[i].ID, Score: float64(len(cands) - r), Rank: r + 1})
		}
	}
	return run, fallbacks, nil
}

// Row is one system's result.
type Row struct {
	Name      string
	Result    eval.Result
	Fallbacks int
}

// Compare runs every system and evaluates it with metrics.
func Compare(ctx context.Context, ds *dataset.Dataset, lists Lists, systems []System, metrics []eval.Metric, log io.Writer) ([]Row, error) {
	var rows []Row
	for _, sys := range systems {
		run, fb, err := Run(ctx, ds.Queries, lists, sys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sys.Name, err)
		}
		res, err := eval.Evaluate(ds.Qrels, run, metrics)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sys.Name, err)
		}
		if log != nil {
			fmt.Fprintf(log, "%s done\n", sys.Name)
		}
		rows = append(rows, Row{sys.Name, res, fb})
	}
	return rows, nil
}

// WriteTable prints rows as a markdown table, with paired tests of each
// system against the row named base on the first metric.
func WriteTable(w io.Writer, rows []Row, metrics []eval.Metric, base string) error {
	var baseCol []float64
	for _, r := range rows {
		if r.Name == base {
			baseCol = r.Result.Column(0)
		}
	}
	if baseCol == nil {
		return fmt.Errorf("no system named %q to compare with", base)
	}
	fmt.Fprint(w, "| system |")
	for _, m := range metrics {
		fmt.Fprintf(w, " %s |", m)
	}
	fmt.Fprintf(w, " Δ%s vs %s (p, randomization) |\n|---|", metrics[0], base)
	for range metrics {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w, "---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |", r.Name)
		for _, m := range metrics {
			fmt.Fprintf(w, " %.4f |", r.Result.Value(m.String()))
		}
		if r.Name != base {
			c, err := eval.Compare(r.Result.Column(0), baseCol)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, " %+.4f (p=%.3f) |", c.Delta, c.PRandom)
		} else {
			fmt.Fprint(w, " |")
		}
		if r.Fallbacks > 0 {
			fmt.Fprintf(w, " (%d queries kept first-stage order)", r.Fallbacks)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// IndexLists retrieves each judged query's top depth candidates from a
// semrank index (Bleve BM25, or the dataset's given lists scored by it).
//
// An index that holds none of ds's documents (one of another corpus) is
// an error: every candidate would be unjudged, and every metric 0.
func IndexLists(ctx context.Context, idx *index.Index, ds *dataset.Dataset, depth int) (Lists, error) {
	out := Lists{}
	hits, known := 0, 0
	p, err := rerank.FirstStagePipeline(idx, depth)
	if err != nil {
		return nil, err
	}
	s := rerank.Searcher{Index: idx, Pipeline: p}
	for _, q := range ds.Queries {
		qhits, err := offline.Candidates(ctx, s, ds, q, depth)
		if err == nil {
			err = s.Load(ctx, qhits)
		}
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", q.ID, err)
		}
		for _, h := range qhits {
			hits++
			text := h.Title + "\n" + h.Text
			if d, ok := ds.Doc(h.ID); ok {
				text = d.FullText()
				known++
			}
			out[q.ID] = append(out[q.ID], Candidate{ID: h.ID, Text: text, Rank: h.Rank, Score: h.Score})
		}
	}
	if len(ds.Corpus) > 0 && hits > 0 && known == 0 {
		return nil, fmt.Errorf("none of the %d candidates the index %s returned is a document of %s: is it an index of another corpus?", hits, idx.Path, ds.Dir)
	}
	return out, nil
}

// JudgedOnly returns ds with only the queries that have judgments (trec_eval
// and the foundation numbers ignore the rest).
func JudgedOnly(ds *dataset.Dataset) *dataset.Dataset {
	out := *ds
	out.Queries = nil
	for _, q := range ds.Queries {
		if ds.Qrels.Relevant(q.ID) > 0 {
			out.Queries = append(out.Queries, q)
		}
	}
	return &out
}
