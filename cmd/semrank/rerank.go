package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/rerank/offline"
	_ "github.com/semrank/semrank/rerank/stages" // registers the stage types
)

// rerankOptions are the flags of semrank rerank.
type rerankOptions struct {
	dataDir, indexPath, pipelinePath, out, firstOut string
}

// newRerankCmd returns semrank rerank.
func newRerankCmd() *cobra.Command {
	var o rerankOptions
	cmd := &cobra.Command{
		Use:   "rerank --data DIR [--index PATH] --pipeline FILE --out run.trec",
		Short: "Rerank every query of a BEIR directory with a pipeline and write a TREC run",
		Long: `Rerank every query of a BEIR directory. Candidates are DIR/candidates.trec
when present (scored by the first stage), else the index's BM25 top window.
Without --index the corpus is indexed into a temporary index, with the
payloads the pipeline's stages read. Prints metrics when DIR has judgments.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRerank(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dataDir, "data", "", "BEIR directory")
	f.StringVar(&o.indexPath, "index", "", "index path (default: index the corpus into a temporary index)")
	f.StringVar(&o.pipelinePath, "pipeline", "", "pipeline file (YAML or JSON), or a directory holding pipeline.yaml")
	f.StringVar(&o.out, "out", "", "output TREC run")
	f.StringVar(&o.firstOut, "first-stage-out", "", "also write the first-stage run here")
	for _, n := range []string{"data", "pipeline", "out"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

// runRerank runs semrank rerank.
func runRerank(cmd *cobra.Command, o rerankOptions) error {
	o.pipelinePath = pipelineFile(o.pipelinePath)
	inputs := append(datasetFiles(o.dataDir), pipelineFiles(o.pipelinePath, true)...)
	if err := checkOutput("--out", o.out, inputs...); err != nil {
		return err
	}
	if o.firstOut != "" {
		if err := checkOutput("--first-stage-out", o.firstOut, append(inputs, o.out)...); err != nil {
			return err
		}
	}
	ctx := cmd.Context()
	ds, err := loadDataset(o.dataDir)
	if err != nil {
		return err
	}
	var bar = newBar(len(ds.Corpus), "indexing")
	opened, err := offline.Open(ctx, o.pipelinePath, o.indexPath, ds, func(d, _ int) { bar.Set(d) })
	bar.Finish()
	if err != nil {
		return err
	}
	defer opened.Close()
	idx, p := opened.Index, opened.Pipeline
	bar = newBar(len(ds.Queries), "reranking")
	first, run, err := offline.RunDataset(ctx, idx, ds, p, 0, func(d, _ int) { bar.Set(d) })
	bar.Finish()
	if err != nil {
		return err
	}
	if err := checkRanked(ds, run); err != nil {
		return err
	}
	if err := run.WriteFile(o.out, "semrank"); err != nil {
		return err
	}
	if o.firstOut != "" {
		if err := first.WriteFile(o.firstOut, "bm25"); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "wrote %s: %d queries, stages %v\n", o.out, run.Len(), p.StageNames())
	noteUnrankedQueries(cmd.ErrOrStderr(), ds, run)
	if ds.Qrels != nil {
		base, baseName := ds.Candidates, "the given candidate order ("+filepath.Join(o.dataDir, "candidates.trec")+")"
		if base == nil {
			base, baseName = &first, "the BM25 first stage"
		}
		keep := func(qid string) bool { _, ok := ds.Qrels[qid]; return ok }
		b := base.Filter(keep)
		rep, err := eval.NewReport(ds.Qrels, run.Filter(keep), &b, eval.MustParseMetrics("map@10,mrr@10,map,ndcg@10,p@1,auc"))
		if err != nil {
			return err
		}
		fmt.Fprintln(w, "baseline:", baseName)
		return rep.WriteText(w, false)
	}
	return nil
}

// checkRanked refuses a run that ranks none of ds's queries, before it is
// written: a run file with no line is one every reader of runs (eval,
// report, export) refuses, so it would only defer the error.
func checkRanked(ds *dataset.Dataset, run dataset.Run) error {
	if run.Len() > 0 {
		return nil
	}
	return fmt.Errorf("none of the %d queries has a ranking (no candidates, no searchable terms, or no document matched); nothing written", len(ds.Queries))
}

// noteUnrankedQueries says which of ds's queries run has no ranking for
// (an empty given list, no searchable terms, or nothing in the index
// matched), naming a few:
// the run file simply lacks them, and an evaluation counts them 0.
func noteUnrankedQueries(w io.Writer, ds *dataset.Dataset, run dataset.Run) {
	var ids []string
	for _, q := range ds.Queries {
		if len(run.Ranking(q.ID)) == 0 {
			ids = append(ids, q.ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	const show = 5
	list := strings.Join(ids[:min(show, len(ids))], ", ")
	if len(ids) > show {
		list += ", …"
	}
	fmt.Fprintf(w, "note: %d of %d queries have no ranking (no candidates, no searchable terms, or no document matched): %s\n", len(ids), len(ds.Queries), list)
}
