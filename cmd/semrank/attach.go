package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// attachOptions are the flags of semrank attach.
type attachOptions struct {
	indexPath, pipelinePath string
}

// newAttachCmd returns semrank attach.
func newAttachCmd() *cobra.Command {
	var o attachOptions
	cmd := &cobra.Command{
		Use:   "attach --index PATH --pipeline FILE",
		Short: "Compute a pipeline's payloads for a Bleve index semrank did not build, from its stored text",
		Long: `Compute the payloads a pipeline's stages read (term counts, TWEAK weights,
concept vectors) for every document of a Bleve index semrank did not build,
from the stored text of the pipeline's fields: analyzed with the analyzer
the index's mapping gives them, or the pipeline's fields.analyzer, as the
stages analyze them over that index.
They are kept in the index directory (semrank_payloads/, and
semrank_attach.json recording the fields and analyzer), and stages of any
pipeline reading the same fields over the index read them instead of each
candidate's stored text: the same scores, without loading and analyzing the
window's text at every query. A pipeline reading other fields is not served
them.

Run it again after the application has written to the index through its
own handle: it recomputes the payloads of the documents whose text changed
(each document's text has a fingerprint), and of stages whose model
changed, and drops the payloads of deleted documents. Writes through
index.Attached (NewAttached wraps an application's open index) drop the
payloads of what they replace or delete, and those documents are scored
from their text until the next attach. The index must not be open
elsewhere meanwhile.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAttach(cmd, o) },
	}
	cmd.Flags().StringVar(&o.indexPath, "index", "", "Bleve index semrank did not build (any mapping)")
	cmd.Flags().StringVar(&o.pipelinePath, "pipeline", "", "pipeline file, or a directory holding pipeline.yaml: its fields and the payloads its stages read")
	_ = cmd.MarkFlagRequired("index")
	_ = cmd.MarkFlagRequired("pipeline")
	return cmd
}

// runAttach runs semrank attach.
func runAttach(cmd *cobra.Command, o attachOptions) error {
	o.pipelinePath = pipelineFile(o.pipelinePath)
	a, err := index.OpenAttached(o.indexPath)
	if err != nil {
		return err
	}
	p, _, err := rerank.LoadPipeline(o.pipelinePath, rerank.EnvOf(a), rerank.StagesOnly())
	if err != nil {
		a.Close()
		return err
	}
	n, err := a.DocCount()
	if err != nil {
		a.Close()
		return err
	}
	start := time.Now()
	bar := newBar(int(n), "attaching")
	rep, err := rerank.Attach(cmd.Context(), a, p, func(done, _ int) { bar.Set(done) })
	bar.Finish()
	if cerr := a.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	src, _ := a.Source()
	fmt.Fprintf(out, "attached payloads to %s in %s: %d documents, %d computed, %d unchanged, %d dropped (deleted)\n",
		o.indexPath, time.Since(start).Round(time.Millisecond), rep.Docs, rep.Computed, rep.Kept, rep.Dropped)
	if rep.Skipped > 0 {
		fmt.Fprintf(out, "  %d documents have ids too long for a payload log; stages score them from their text\n", rep.Skipped)
	}
	fmt.Fprintf(out, "  from %s\n", src)
	for _, name := range a.PayloadNames() {
		fmt.Fprintf(out, "  payload %s from model %s\n", name, a.PayloadModel(name))
	}
	return nil
}
