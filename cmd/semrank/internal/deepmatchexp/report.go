package deepmatchexp

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/semrank/semrank/cmd/semrank/internal/conceptexp"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/models/deepmatch"
)

// Metrics are the reported metrics on candidate reranking.
const Metrics = "map@10,mrr@10,ndcg@1"

// PoolMetrics are the paper's metrics on its random pools of six.
const PoolMetrics = "ndcg@1,ndcg@6"

func evaluate(qs []deepmatch.Query, scores [][]float64, metrics string) (eval.Result, error) {
	i := 0
	run := deepmatch.Rerank(qs, func(deepmatch.Query) []float64 { i++; return scores[i-1] })
	return eval.Evaluate(deepmatch.Qrels(qs), run, eval.MustParseMetrics(metrics))
}

// Pair is a paired comparison to report: system A against system B.
type Pair struct{ A, B string }

// Comparisons returns the pairs the issue asks about: every system against
// the IR order, DeepMatch against each other system alone, and DeepMatch
// fused with the IR order against each other fused system.
func (o *Outcome) Comparisons() []Pair {
	var ps []Pair
	for _, n := range o.Names {
		if n != IR {
			ps = append(ps, Pair{n, IR})
		}
	}
	if _, ok := o.Scores[deepmatch.MethodDeepMatch]; !ok {
		return ps
	}
	for _, fused := range []bool{false, true} {
		dm := deepmatch.MethodDeepMatch
		if fused {
			dm += conceptexp.FuseSuffix
		}
		for _, n := range o.Names {
			if n != dm && n != IR && strings.HasSuffix(n, conceptexp.FuseSuffix) == fused {
				if _, ok := o.Scores[dm]; ok {
					ps = append(ps, Pair{dm, n})
				}
			}
		}
	}
	return ps
}

// Report writes markdown tables: metrics per system on the candidate
// lists, paired tests on map@10, and the paper-protocol pools.
func (o *Outcome) Report(w io.Writer) error {
	if err := table(w, o.Test, o.Scores, o.Names, Metrics, o.Comparisons(), "map@10"); err != nil {
		return err
	}
	var poolNames []string // the IR order has no meaning on pools
	for _, n := range o.Names {
		if _, ok := o.PoolScores[n]; ok && n != IR {
			poolNames = append(poolNames, n)
		}
	}
	fmt.Fprintf(w, "\nPaper protocol: %d pools of 1 relevant + 5 random candidates of other queries.\n\n", len(o.Pools))
	var pairs []Pair
	for _, n := range poolNames {
		if n != deepmatch.MethodDeepMatch && n != IR {
			pairs = append(pairs, Pair{deepmatch.MethodDeepMatch, n})
		}
	}
	if _, ok := o.PoolScores[deepmatch.MethodDeepMatch]; !ok {
		pairs = nil
	}
	return table(w, o.Pools, o.PoolScores, poolNames, PoolMetrics, pairs, "ndcg@1")
}

func table(w io.Writer, qs []deepmatch.Query, scores Scores, names []string, metrics string, pairs []Pair, key string) error {
	res := map[string]eval.Result{}
	ms := eval.MustParseMetrics(metrics)
	fmt.Fprintf(w, "| system (%d queries) |", len(qs))
	for _, m := range ms {
		fmt.Fprintf(w, " %s |", m)
	}
	fmt.Fprint(w, "\n|---|")
	for range ms {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, n := range names {
		r, err := evaluate(qs, scores[n], metrics)
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		res[n] = r
		fmt.Fprintf(w, "| %s |", n)
		for i := range ms {
			fmt.Fprintf(w, " %.4f |", r.Mean[i])
		}
		fmt.Fprintln(w)
	}
	if len(pairs) == 0 {
		return nil
	}
	col := 0
	for i, m := range ms {
		if m.String() == key {
			col = i
		}
	}
	fmt.Fprintf(w, "\n| %s: A vs B | A | B | Δ | t-test p | randomization p | A better / worse |\n|---|---|---|---|---|---|---|\n", key)
	for _, p := range pairs {
		c, err := eval.Compare(res[p.A].Column(col), res[p.B].Column(col))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "| %s vs %s | %.4f | %.4f | %+.4f | %.3g | %.3g | %d / %d |\n",
			p.A, p.B, c.MeanA, c.MeanB, c.Delta, c.PTTest, c.PRandom, c.Improved, c.Hurt)
	}
	return nil
}

// Weights says how many weights the learned system name has: one count
// after RunSplit, and the range over the folds after CrossValidate, whose
// folds learn different vocabularies.
func (o *Outcome) Weights(name string) string {
	ps := o.Params[name]
	if len(ps) == 0 {
		return "no weights recorded"
	}
	lo, hi := slices.Min(ps), slices.Max(ps)
	if len(ps) == 1 {
		return fmt.Sprintf("%d weights", lo)
	}
	if lo == hi {
		return fmt.Sprintf("%d weights in each of %d folds", lo, len(ps))
	}
	return fmt.Sprintf("%d to %d weights over %d folds", lo, hi, len(ps))
}
