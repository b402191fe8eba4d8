package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
)

// evalOptions are the flags of semrank eval.
type evalOptions struct {
	qrelsPath, runPath, metrics, baseline string
	perQuery, asJSON, ignoreUnjudged      bool
}

// newEvalCmd returns semrank eval.
func newEvalCmd() *cobra.Command {
	var o evalOptions
	cmd := &cobra.Command{
		Use:   "eval --qrels FILE --run FILE",
		Short: "Evaluate a TREC run against judgments (BEIR TSV, TREC or SemEval qrels)",
		Long: `Evaluate a TREC run (or SemEval-2016 predictions, as export semeval2016
writes them) against judgments.

Metrics: map@k (the SemEval-2016 scorer's MAP), map (trec_eval MAP), mrr@k,
ndcg@k, p@k, r@k, auc; trec_eval's names ndcg_cut_k, recall_k, P_k,
recip_rank and map are accepted too. Without --metrics, a run (and
baseline) ranking at most 10 documents for every query, as SemEval's
candidate lists are, gets SemEval's metrics (map@10,mrr@10,ndcg@10,p@1,auc),
and any other run BEIR's (ndcg@10,map,r@100): on a retrieval run map@10
counts only the relevant documents found in the top 10 and reads several
times trec MAP. Every metric is averaged over all judged queries; a
query with no relevant candidate counts as 0. AUC is left out, with a note,
where the judgments mark no document not relevant (CACM's): it would be 0.5
whatever the ranking. Tied scores keep the run's order, as in the SemEval
scorer (trec_eval orders them by descending document id). With --baseline, a paired t-test and a paired
randomization test compare the run with the baseline per metric.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runEval(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.qrelsPath, "qrels", "", "judgments: BEIR qrels TSV, TREC qrels, or a SemEval .relevancy file")
	f.StringVar(&o.runPath, "run", "", "run to evaluate: TREC, or SemEval predictions")
	f.StringVar(&o.metrics, "metrics", "", "comma-separated metrics (default: SemEval's for runs of at most 10 documents a query, else BEIR's; see above)")
	f.StringVar(&o.baseline, "baseline", "", "a second run to compare with (paired significance tests)")
	f.BoolVar(&o.perQuery, "per-query", false, "also print each query's values")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	f.BoolVar(&o.ignoreUnjudged, "ignore-unjudged", false, "drop run queries that have no judgments instead of failing")
	_ = cmd.MarkFlagRequired("qrels")
	_ = cmd.MarkFlagRequired("run")
	return cmd
}

// runEval runs semrank eval.
func runEval(cmd *cobra.Command, o evalOptions) error {
	var ms []eval.Metric
	if cmd.Flags().Changed("metrics") {
		var err error
		if ms, err = eval.ParseMetrics(o.metrics); err != nil {
			return err
		}
	}
	q, err := readJudgments(o.qrelsPath)
	if err != nil {
		return err
	}
	load := func(p string) (dataset.Run, error) {
		r, err := dataset.ReadRunFile(p)
		if err != nil {
			return r, err
		}
		if o.ignoreUnjudged {
			r, err = judgedOnly(r, q, o.qrelsPath)
		}
		return r, err
	}
	run, err := load(o.runPath)
	if err != nil {
		return err
	}
	// Judged queries a run does not rank count 0 in every
	// metric, as the official scorers count them; say so, since a
	// partial run otherwise just looks bad (and a partial
	// baseline makes the run look good).
	note := func(r dataset.Run, path string) {
		if n := q.UnrankedNote(r, path); n != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", n)
		}
	}
	note(run, o.runPath)
	var base *dataset.Run
	if o.baseline != "" {
		b, err := load(o.baseline)
		if err != nil {
			return err
		}
		note(b, o.baseline)
		base = &b
	}
	if ms == nil {
		if base != nil {
			ms = eval.DefaultMetrics(run, *base)
		} else {
			ms = eval.DefaultMetrics(run)
		}
	}
	rep, err := eval.NewReport(q, run, base, ms)
	if err != nil {
		return unjudgedHint(err)
	}
	if o.asJSON {
		return rep.WriteJSON(cmd.OutOrStdout(), o.perQuery)
	}
	return rep.WriteText(cmd.OutOrStdout(), o.perQuery)
}

// readJudgments reads --qrels and refuses judgments that mark no document
// relevant: every metric would be 0, and such a file is usually one in
// another form read as TREC qrels (SMART's "qid docid 0 0" lines, say).
func readJudgments(path string) (dataset.Qrels, error) {
	q, err := dataset.ReadQrelsFile(path)
	if err != nil {
		return nil, err
	}
	if q.JudgesRelevant() {
		return q, nil
	}
	return nil, fmt.Errorf("%s: no judgment has a relevance above 0, so every metric would be 0 (want BEIR TSV, TREC qrels or SemEval gold)", path)
}

// unjudgedHint adds to err, when a run names a query the judgments lack
// (dataset.ErrUnknownQuery), the flag that skips such queries; eval and
// report both take it.
func unjudgedHint(err error) error {
	if errors.Is(err, dataset.ErrUnknownQuery) {
		return fmt.Errorf("%w (use --ignore-unjudged to skip queries without judgments)", err)
	}
	return err
}

// judgedOnly drops run's queries that q does not judge (--ignore-unjudged),
// and refuses a run left with none: it would score 0 on every metric.
func judgedOnly(run dataset.Run, q dataset.Qrels, qrelsPath string) (dataset.Run, error) {
	r := run.Filter(func(qid string) bool { _, ok := q[qid]; return ok })
	if r.Len() == 0 {
		return r, fmt.Errorf("%s: none of its %d queries has judgments in %s", run.File, run.Len(), qrelsPath)
	}
	return r, nil
}
