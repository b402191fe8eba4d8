package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/blevesearch/bleve/v2"
	"github.com/spf13/cobra"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/index/convert"
	"github.com/semrank/semrank/internal/atomicfile"
	"github.com/semrank/semrank/rerank"
)

// newConvertCmd returns semrank convert, which groups the converters.
func newConvertCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "convert",
		Short: "Convert a collection into a BEIR directory",
	}
	cmd.AddCommand(newConvertSemEvalCmd(), newConvertSMARTCmd(), newConvertBleveCmd())
	return cmd
}

// convertSemEvalOptions are the flags of semrank convert semeval2016.
type convertSemEvalOptions struct {
	xmls         []string
	subtask, out string
}

// newConvertSemEvalCmd returns semrank convert semeval2016.
func newConvertSemEvalCmd() *cobra.Command {
	var o convertSemEvalOptions
	semevalCmd := &cobra.Command{
		Use:   "semeval2016 --xml F [--xml F2 ...] --subtask A|B --out DIR",
		Short: "Convert SemEval-2016 Task 3 XML (subtask A or B)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runConvertSemEval(cmd, o) },
	}
	semevalCmd.Flags().StringArrayVar(&o.xmls, "xml", nil, "SemEval-2016 Task 3 XML file (repeatable; files are merged)")
	semevalCmd.Flags().StringVar(&o.subtask, "subtask", "B", "subtask: A (question→comments) or B (question→questions)")
	semevalCmd.Flags().StringVar(&o.out, "out", "", "output BEIR directory")
	_ = semevalCmd.MarkFlagRequired("out")

	return semevalCmd
}

// runConvertSemEval runs semrank convert semeval2016.
func runConvertSemEval(cmd *cobra.Command, o convertSemEvalOptions) error {
	st, err := convert.ParseSubtask(o.subtask)
	if err != nil {
		return err
	}
	if len(o.xmls) == 0 {
		return fmt.Errorf("give at least one --xml file")
	}
	c := convert.NewSemEval(st)
	for _, x := range o.xmls {
		if err := c.AddFile(x); err != nil {
			return err
		}
	}
	notes(cmd.ErrOrStderr(), c.Clashes(), "ids read twice with different texts or labels")
	notes(cmd.ErrOrStderr(), c.Unjudged(), "queries with unlabelled candidates among labelled ones")
	return saveDataset(cmd, c.Dataset(), o.out)
}

// convertSMARTOptions are the flags of semrank convert smart.
type convertSMARTOptions struct {
	docs, queries, qrels, smartOut string
}

// newConvertSMARTCmd returns semrank convert smart.
func newConvertSMARTCmd() *cobra.Command {
	var o convertSMARTOptions
	smartCmd := &cobra.Command{
		Use:   "smart --docs F --queries F --qrels F --out DIR",
		Short: "Convert a SMART collection such as CACM",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runConvertSMART(cmd, o) },
	}
	smartCmd.Flags().StringVar(&o.docs, "docs", "", "documents file (e.g. cacm.all)")
	smartCmd.Flags().StringVar(&o.queries, "queries", "", "queries file (e.g. query.text)")
	smartCmd.Flags().StringVar(&o.qrels, "qrels", "", "judgments file (e.g. qrels.text)")
	smartCmd.Flags().StringVar(&o.smartOut, "out", "", "output BEIR directory")
	for _, f := range []string{"docs", "queries", "qrels", "out"} {
		_ = smartCmd.MarkFlagRequired(f)
	}
	return smartCmd
}

// runConvertSMART runs semrank convert smart.
func runConvertSMART(cmd *cobra.Command, o convertSMARTOptions) error {
	ds, err := convert.SMART(o.docs, o.queries, o.qrels)
	if err != nil {
		return err
	}
	return saveDataset(cmd, ds, o.smartOut)
}

// convertBleveOptions are the flags of semrank convert bleve.
type convertBleveOptions struct {
	bleveIndex, blevePipeline, bleveOut string
}

// newConvertBleveCmd returns semrank convert bleve.
func newConvertBleveCmd() *cobra.Command {
	var o convertBleveOptions
	bleveCmd := &cobra.Command{
		Use:   "bleve --index PATH [--pipeline FILE] --out DIR",
		Short: "Write the documents of any Bleve index as DIR/corpus.jsonl",
		Long: `Write every document of a Bleve index, semrank's or any other, to
DIR/corpus.jsonl: its title and text read from the stored fields the
pipeline's fields: key names (semrank's title and text without --pipeline),
its other stored fields as metadata. With queries.jsonl and qrels/test.tsv
beside it, the trainers learn from the documents of an index semrank did
not build, as semrank run --index ranks them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runConvertBleve(cmd, o) },
	}
	bleveCmd.Flags().StringVar(&o.bleveIndex, "index", "", "Bleve index (any mapping)")
	bleveCmd.Flags().StringVar(&o.blevePipeline, "pipeline", "", "pipeline file whose fields: key names the title and text fields")
	bleveCmd.Flags().StringVar(&o.bleveOut, "out", "", "output directory")
	for _, f := range []string{"index", "out"} {
		_ = bleveCmd.MarkFlagRequired(f)
	}
	return bleveCmd
}

// runConvertBleve runs semrank convert bleve.
func runConvertBleve(cmd *cobra.Command, o convertBleveOptions) error {
	o.blevePipeline = pipelineFile(o.blevePipeline)
	idx, err := index.OpenAny(o.bleveIndex)
	if err != nil {
		return err
	}
	defer idx.Close()
	var fields rerank.Fields
	if o.blevePipeline != "" {
		cfg, err := rerank.ReadConfig(o.blevePipeline)
		if err != nil {
			return err
		}
		fields = cfg.Fields
	}
	read := map[string]bool{}
	for _, f := range fields.All() {
		read[f] = true
	}
	var docs []dataset.Doc
	err = eachDocument(cmd.Context(), idx, fields, func(c rerank.Candidate) error {
		d := dataset.Doc{ID: c.ID, Title: c.Title, Text: c.Text}
		for k, v := range c.Metadata {
			if !read[k] {
				if d.Metadata == nil {
					d.Metadata = map[string]any{}
				}
				d.Metadata[k] = v
			}
		}
		docs = append(docs, d)
		return nil
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.bleveOut, 0o755); err != nil {
		return err
	}
	path := filepath.Join(o.bleveOut, dataset.CorpusFile)
	if err := atomicfile.Write(path, func(w io.Writer) error { return dataset.WriteJSONL(w, docs) }); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d documents\n", path, len(docs))
	return nil
}

func saveDataset(cmd *cobra.Command, ds *dataset.Dataset, out string) error {
	if err := ds.Save(out); err != nil {
		return err
	}
	judged := 0
	if ds.Qrels != nil {
		judged = len(ds.Qrels)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d documents, %d queries, %d judged\n", out, len(ds.Corpus), len(ds.Queries), judged)
	return nil
}

// notes prints a few of the converter's notes; what names the rest.
func notes(w io.Writer, lines []string, what string) {
	for i, c := range lines {
		if i == 5 {
			fmt.Fprintf(w, "note: and %d more %s\n", len(lines)-i, what)
			break
		}
		fmt.Fprintf(w, "note: %s\n", c)
	}
}

// eachDocument calls fn with every document of idx, any Bleve index, its
// text read from the fields fields names (semrank's own when empty), as
// the stages see a candidate's.
func eachDocument(ctx context.Context, idx bleve.Index, fields rerank.Fields, fn func(rerank.Candidate) error) error {
	if err := index.CheckFields(idx, fields.All()...); err != nil {
		return err
	}
	p, err := rerank.FirstStageOf(idx, &rerank.Config{Fields: fields}, 0)
	if err != nil {
		return err
	}
	return rerank.Searcher{Index: idx, Pipeline: p}.Documents(ctx, []string{"*"}, fn)
}
