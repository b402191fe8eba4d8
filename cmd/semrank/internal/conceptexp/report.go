package conceptexp

import (
	"fmt"
	"io"
	"math"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/models/concept"
)

// Metrics are the reported metrics: official SemEval MAP, MRR, AUC.
const Metrics = "map@10,mrr@10,auc"

// FuseSuffix marks a system fused with the first stage.
const FuseSuffix = " + IR"

// Fuse returns the per-list z-score sum of a system's scores and the
// first-stage scores: a fixed, unlearned fusion.
func Fuse(sys, first [][]float64) [][]float64 {
	out := make([][]float64, len(sys))
	for i := range sys {
		a, b := zscores(sys[i]), zscores(first[i])
		out[i] = make([]float64, len(a))
		for j := range a {
			out[i][j] = a[j] + b[j]
		}
	}
	return out
}

func zscores(v []float64) []float64 {
	var mean, sd float64
	for _, x := range v {
		mean += x / float64(len(v))
	}
	for _, x := range v {
		sd += (x - mean) * (x - mean) / float64(len(v))
	}
	sd = math.Sqrt(sd)
	out := make([]float64, len(v))
	if sd == 0 {
		return out
	}
	for i, x := range v {
		out[i] = (x - mean) / sd
	}
	return out
}

// AddFused adds "<name> + IR" for every system but IR itself.
func AddFused(scores Scores, names []string) []string {
	out := append([]string(nil), names...)
	for _, n := range names {
		if n == IR {
			continue
		}
		scores[n+FuseSuffix] = Fuse(scores[n], scores[IR])
		out = append(out, n+FuseSuffix)
	}
	return out
}

// Report writes a markdown table: each system's metrics, and its paired
// comparison in map@10 against a reference — TF-IDF cosine for systems
// alone, the first stage (IR) for fused systems — with the t-test and
// randomization p-values of eval.Compare.
func Report(w io.Writer, lists []concept.Judged, scores Scores, names []string) error {
	metrics := eval.MustParseMetrics(Metrics)
	res := map[string]eval.Result{}
	for _, n := range names {
		r, err := concept.Evaluate(lists, scores[n], metrics)
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		res[n] = r
	}
	fmt.Fprintf(w, "| system | MAP | MRR | AUC | vs | ΔMAP | p (t) | p (rand) | ΔAUC | p (t) |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|\n")
	for _, n := range names {
		r := res[n]
		ref := TFIDF
		if len(n) > len(FuseSuffix) && n[len(n)-len(FuseSuffix):] == FuseSuffix {
			ref = IR
		}
		fmt.Fprintf(w, "| %s | %.4f | %.4f | %.4f |", n, r.Mean[0], r.Mean[1], r.Mean[2])
		if n == ref || n == IR {
			fmt.Fprintf(w, " | | | | | |\n")
			continue
		}
		cm, err := eval.Compare(r.Column(0), res[ref].Column(0))
		if err != nil {
			return err
		}
		ca, err := eval.Compare(r.Column(2), res[ref].Column(2))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, " %s | %+.4f | %.3f | %.3f | %+.4f | %.3f |\n", ref, cm.Delta, cm.PTTest, cm.PRandom, ca.Delta, ca.PTTest)
	}
	fmt.Fprintf(w, "\n%d queries.\n", len(lists))
	return nil
}
