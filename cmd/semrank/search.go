package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
)

func init() {
	var indexPath string
	var n int
	cmd := &cobra.Command{
		Use:   "search --index PATH [-n 10] \"query text\"",
		Short: "Search an index with BM25 and print rank, id, score and title",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			idx, err := index.Open(indexPath)
			if err != nil {
				return err
			}
			defer idx.Close()
			text := strings.Join(args, " ")
			q, err := index.TextQuery(text)
			if err != nil {
				return fmt.Errorf("%q: %w", text, err)
			}
			hits, err := idx.TopN(context.Background(), q, n)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, h := range hits {
				fmt.Fprintf(w, "%3d  %-14s %8.4f  %s\n", h.Rank, h.ID, h.Score, snippet(h.Title, h.Text, 70))
			}
			if len(hits) == 0 {
				fmt.Fprintln(w, "no results")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&indexPath, "index", "", "index path")
	cmd.Flags().IntVarP(&n, "n", "n", 10, "number of results")
	_ = cmd.MarkFlagRequired("index")
	rootCmd.AddCommand(cmd)

	var dataDir, out string
	var depth int
	runCmd := &cobra.Command{
		Use:   "run --data DIR --index PATH [--depth 100] --out run.trec",
		Short: "Run the first stage (BM25) for every query of a BEIR directory",
		Long: `Run the first stage for every query. When the directory has candidates.trec,
exactly those candidates are scored by BM25 (candidates matching no query term
follow in their given order); otherwise the top --depth documents are retrieved.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ds, err := eval.LoadDataset(dataDir)
			if err != nil {
				return err
			}
			idx, err := index.Open(indexPath)
			if err != nil {
				return err
			}
			defer idx.Close()
			bar := newBar(len(ds.Queries), "queries")
			run, err := idx.FirstStageRun(context.Background(), ds, depth, func(d, _ int) { _ = bar.Set(d) })
			_ = bar.Finish()
			if err != nil {
				return err
			}
			if err := run.WriteFile(out, "bm25"); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d queries\n", out, run.Len())
			return nil
		},
	}
	runCmd.Flags().StringVar(&dataDir, "data", "", "BEIR directory")
	runCmd.Flags().StringVar(&indexPath, "index", "", "index path")
	runCmd.Flags().IntVar(&depth, "depth", 100, "candidates per query when the directory has no candidates.trec")
	runCmd.Flags().StringVar(&out, "out", "", "output TREC run")
	for _, f := range []string{"data", "index", "out"} {
		_ = runCmd.MarkFlagRequired(f)
	}
	rootCmd.AddCommand(runCmd)
}

func snippet(title, text string, n int) string {
	s := title
	if s == "" {
		s = text
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}
