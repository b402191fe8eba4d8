package recipe

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/offline"
)

// Runs holds named runs over the same queries, in presentation order.
type Runs struct {
	Names []string
	Runs  map[string]dataset.Run
	// Weights, when RunAll's pipeline fuses by agreement
	// (rerank.Agreement), are the weights each feature it weighs took
	// in the queries' windows, averaged over the queries: how far the
	// fusion trusted each stage on the collection.
	Weights []FeatureWeight
}

// FeatureWeight is a fusion feature's prior weight and its mean weight
// over queries (see Runs.Weights).
type FeatureWeight struct {
	Name        string
	Prior, Mean float64
}

// WeightsNote says, for a run's report, what weights the agreement
// fusion gave each feature on average; "" without any.
func WeightsNote(ws []FeatureWeight) string {
	if len(ws) == 0 {
		return ""
	}
	parts := make([]string, len(ws))
	for i, fw := range ws {
		parts[i] = fmt.Sprintf("%s %.2f (%.3g)", fw.Name, fw.Mean, fw.Prior)
	}
	return "agreement fusion, mean weight over the queries' windows (prior in brackets): " + strings.Join(parts, ", ")
}

// agreementWeights sums, query by query, the weights an agreement fusion
// gives each feature it weighs (see Runs.Weights).
type agreementWeights struct {
	fusion  *rerank.Agreement
	names   []string
	sums    map[string]float64
	queries int
}

// add adds the weights of the window in.
func (a *agreementWeights) add(in rerank.FusionInput) error {
	names, _, w, err := a.fusion.Terms(in)
	if err != nil {
		return err
	}
	if a.sums == nil {
		a.sums = map[string]float64{}
	}
	for f, n := range names {
		if a.fusion.Weights[n] == 0 {
			continue
		}
		if _, ok := a.sums[n]; !ok {
			a.names = append(a.names, n)
		}
		a.sums[n] += w[f]
	}
	a.queries++
	return nil
}

// means returns the features' mean weights, in the fusion's feature
// order; nil before any query.
func (a *agreementWeights) means() []FeatureWeight {
	if a.queries == 0 {
		return nil
	}
	out := make([]FeatureWeight, len(a.names))
	for i, n := range a.names {
		out[i] = FeatureWeight{Name: n, Prior: a.fusion.Weights[n], Mean: a.sums[n] / float64(a.queries)}
	}
	return out
}

func (r *Runs) add(name string, run dataset.Run) {
	if r.Runs == nil {
		r.Runs = map[string]dataset.Run{}
	}
	if _, ok := r.Runs[name]; !ok {
		r.Names = append(r.Names, name)
	}
	r.Runs[name] = run
}

// Merge appends other's entries to r's runs of the same names (for
// assembling cross-validation folds).
func (r *Runs) Merge(other Runs) {
	for _, n := range other.Names {
		run, ok := r.Runs[n]
		if !ok {
			run = dataset.NewRun()
		}
		o := other.Runs[n]
		for _, qid := range o.QueryIDs() {
			run.Set(qid, o.Ranking(qid))
		}
		r.add(n, run)
	}
}

// FeedbackRun names RunAll's run of a first stage with feedback (see
// rerank.Feedback): its window in the expanded query's order.
const FeedbackRun = "first stage (BM25+RM3)"

// RunAll reranks every query of ds with p and returns the runs of the given
// order (when ds has candidates.trec), the first stage (BM25, and with
// feedback also FeedbackRun, the window it retrieved), each stage alone
// (candidates ordered by that stage's score, ties by first-stage rank) and
// the fused pipeline.
func RunAll(ctx context.Context, idx bleve.Index, ds *dataset.Dataset, p *rerank.Pipeline) (Runs, error) {
	var out Runs
	first, fused := dataset.NewRun(), dataset.NewRun()
	stageRuns := make([]dataset.Run, len(p.Stages))
	for i := range stageRuns {
		stageRuns[i] = dataset.NewRun()
	}
	var weights agreementWeights
	weights.fusion, _ = p.Fusion.(*rerank.Agreement)
	// Every stage scores each query once, inside the pipeline; each
	// stage's own order comes from the raw scores the pipeline keeps.
	err := offline.EachQuery(ctx, idx, ds, p, func(_ int, q dataset.Query, hits []rerank.Candidate, scored []rerank.Scored) error {
		for _, h := range hits {
			first.Add(q.ID, dataset.Entry{DocID: h.ID, Rank: h.Rank, Score: index.DistinctScore(h.Score, h.Rank)})
		}
		for j, c := range scored {
			fused.Add(q.ID, dataset.Entry{DocID: c.ID, Rank: j + 1, Score: c.Score})
		}
		// The window as the fusion saw it: its candidates in first-stage
		// order and their stage scores.
		in := p.WindowInput(scored)
		if weights.fusion != nil {
			if err := weights.add(in); err != nil {
				return err
			}
		}
		for s, scores := range in.Scores {
			order := make([]int, len(in.Candidates))
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
			for r, i := range order {
				stageRuns[s].Add(q.ID, dataset.Entry{DocID: in.Candidates[i].ID, Rank: r + 1, Score: float64(len(hits) - r)})
			}
			for r := len(order); r < len(hits); r++ {
				stageRuns[s].Add(q.ID, dataset.Entry{DocID: hits[r].ID, Rank: r + 1, Score: float64(len(hits) - r)})
			}
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	if ds.Candidates != nil {
		out.add("given order", *ds.Candidates)
	}
	if p.Feedback() != nil {
		// The baseline stays BM25: the first stage without feedback.
		bm25, _, err := offline.RunDataset(ctx, idx, ds, p.Unexpanded(), p.WindowSize(), nil)
		if err != nil {
			return out, err
		}
		out.add("first stage (BM25)", bm25)
		out.add(FeedbackRun, first)
	} else {
		out.add("first stage (BM25)", first)
	}
	for s, st := range p.Stages {
		out.add("stage "+st.Name(), stageRuns[s])
	}
	out.add("fused pipeline", fused)
	out.Weights = weights.means()
	return out, nil
}

// Table evaluates every run against qrels and writes a table with paired
// significance tests against the run named baseline.
func Table(w io.Writer, qrels dataset.Qrels, runs Runs, baseline string, metrics []eval.Metric, markdown bool) error {
	keep := func(qid string) bool { _, ok := qrels[qid]; return ok }
	base, ok := runs.Runs[baseline]
	if !ok {
		return fmt.Errorf("recipe: no baseline run %q", baseline)
	}
	b, err := eval.Evaluate(qrels, base.Filter(keep), metrics)
	if err != nil {
		return err
	}
	var names []string
	for _, m := range metrics {
		names = append(names, m.String())
	}
	sep := "\t"
	if markdown {
		sep = " | "
		fmt.Fprintf(w, "| run | %s | p vs %s (t-test / randomization, first metric) |\n", strings.Join(names, " | "), baseline)
		fmt.Fprintf(w, "|---|%s---|\n", strings.Repeat("---|", len(names)))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if !markdown {
		fmt.Fprintf(tw, "run\t%s\tp vs %s (t / rand.)\n", strings.Join(names, "\t"), baseline)
	}
	for _, n := range runs.Names {
		res, err := eval.Evaluate(qrels, runs.Runs[n].Filter(keep), metrics)
		if err != nil {
			return err
		}
		cols := []string{n}
		for i := range metrics {
			cols = append(cols, fmt.Sprintf("%.4f", res.Mean[i]))
		}
		if n == baseline {
			cols = append(cols, "—")
		} else {
			c, err := eval.Compare(res.Column(0), b.Column(0))
			if err != nil {
				return err
			}
			cols = append(cols, fmt.Sprintf("%.4f / %.4f", c.PTTest, c.PRandom))
		}
		if markdown {
			fmt.Fprintf(w, "| %s |\n", strings.Join(cols, sep))
		} else {
			fmt.Fprintln(tw, strings.Join(cols, "\t"))
		}
	}
	if markdown {
		return nil
	}
	fmt.Fprintf(tw, "(%d judged queries)\n", len(b.Queries))
	if err := tw.Flush(); err != nil {
		return err
	}
	// A judged query that no run ranks (no candidates, or no searchable
	// words) counts 0 in every row: say so, as eval and rerank do.
	name := "fused pipeline"
	if _, ok := runs.Runs[name]; !ok {
		name = baseline
	}
	if note := qrels.UnrankedNote(runs.Runs[name].Filter(keep), name); note != "" {
		_, err := fmt.Fprintf(w, "note: %s\n", note)
		return err
	}
	return nil
}
