package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index/convert"
)

func init() {
	convertCmd := &cobra.Command{
		Use:   "convert",
		Short: "Convert a collection into a BEIR directory",
	}
	var xmls []string
	var subtask, out string
	semevalCmd := &cobra.Command{
		Use:   "semeval2016 --xml F [--xml F2 ...] --subtask A|B --out DIR",
		Short: "Convert SemEval-2016 Task 3 XML (subtask A or B)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := convert.ParseSubtask(subtask)
			if err != nil {
				return err
			}
			if len(xmls) == 0 {
				return fmt.Errorf("give at least one --xml file")
			}
			c := convert.NewSemEval(st)
			for _, x := range xmls {
				if err := c.AddFile(x); err != nil {
					return err
				}
			}
			notes(cmd.ErrOrStderr(), c.Clashes(), "ids read twice with different texts or labels")
			notes(cmd.ErrOrStderr(), c.Unjudged(), "queries with unlabelled candidates among labelled ones")
			return saveDataset(cmd, c.Dataset(), out)
		},
	}
	semevalCmd.Flags().StringArrayVar(&xmls, "xml", nil, "SemEval-2016 Task 3 XML file (repeatable; files are merged)")
	semevalCmd.Flags().StringVar(&subtask, "subtask", "B", "subtask: A (question→comments) or B (question→questions)")
	semevalCmd.Flags().StringVar(&out, "out", "", "output BEIR directory")
	_ = semevalCmd.MarkFlagRequired("out")

	var docs, queries, qrels, smartOut string
	smartCmd := &cobra.Command{
		Use:   "smart --docs F --queries F --qrels F --out DIR",
		Short: "Convert a SMART collection such as CACM",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ds, err := convert.SMART(docs, queries, qrels)
			if err != nil {
				return err
			}
			return saveDataset(cmd, ds, smartOut)
		},
	}
	smartCmd.Flags().StringVar(&docs, "docs", "", "documents file (e.g. cacm.all)")
	smartCmd.Flags().StringVar(&queries, "queries", "", "queries file (e.g. query.text)")
	smartCmd.Flags().StringVar(&qrels, "qrels", "", "judgments file (e.g. qrels.text)")
	smartCmd.Flags().StringVar(&smartOut, "out", "", "output BEIR directory")
	for _, f := range []string{"docs", "queries", "qrels", "out"} {
		_ = smartCmd.MarkFlagRequired(f)
	}
	convertCmd.AddCommand(semevalCmd, smartCmd)
	rootCmd.AddCommand(convertCmd)
}

func saveDataset(cmd *cobra.Command, ds *eval.Dataset, out string) error {
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
