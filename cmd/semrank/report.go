package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/eval/report"
)

func init() {
	var qrelsPath, out, metrics, format string
	var runs []string
	var ignoreUnjudged bool
	cmd := &cobra.Command{
		Use:   "report --qrels FILE --run NAME=FILE [--run NAME=FILE ...] --out DIR",
		Short: "Write a markdown table and plots comparing runs (the first is the baseline)",
		Long: `Evaluate runs against judgments and write DIR/report.md: a table of the
metrics with paired significance tests against the first run (the baseline),
and plots (PNG or SVG, gonum/plot): each run's per-query change of the first
metric against the baseline (ap-change), the first metric by rerank window k
(window: the baseline with only its top k reordered as each run orders them,
also as a table), and each run's metric cut to depth k (depth).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := readJudgments(qrelsPath)
			if err != nil {
				return err
			}
			ms, err := eval.ParseMetrics(metrics)
			if err != nil {
				return err
			}
			var named []report.Named
			seen := map[string]bool{}
			for _, r := range runs {
				name, path, ok := strings.Cut(r, "=")
				if !ok || name == "" || path == "" {
					return fmt.Errorf("--run %q: want NAME=FILE", r)
				}
				if seen[name] {
					return fmt.Errorf("--run %q: two runs named %q", r, name)
				}
				seen[name] = true
				run, err := dataset.ReadRunFile(path)
				if errors.Is(err, fs.ErrNotExist) && strings.Contains(path, "=") {
					return fmt.Errorf("--run %q: %w (the name ends at the first \"=\": name %q, file %q)", r, err, name, path)
				}
				if err != nil {
					return err
				}
				if ignoreUnjudged {
					if run, err = judgedOnly(run, q, qrelsPath); err != nil {
						return err
					}
				}
				if n := q.UnrankedNote(run, path); n != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", n)
				}
				named = append(named, report.Named{Name: name, Run: run})
			}
			if err := report.Write(out, q, named, report.Options{Metrics: ms, Format: format}); err != nil {
				return unjudgedHint(err)
			}
			if len(named) == 1 {
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/report.md, depth.%s\n", out, format)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/report.md, ap-change.%s, window.%s, depth.%s\n", out, format, format, format)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&qrelsPath, "qrels", "", "judgments")
	f.StringArrayVar(&runs, "run", nil, "NAME=FILE (repeatable; the first is the baseline; the name ends at the first \"=\")")
	f.StringVar(&out, "out", "", "output directory")
	f.StringVar(&metrics, "metrics", "map@10,map,mrr@10,ndcg@10,p@1,auc", "table metrics; the first is plotted and tested")
	f.StringVar(&format, "format", "png", "plot format: png or svg")
	f.BoolVar(&ignoreUnjudged, "ignore-unjudged", false, "drop run queries that have no judgments")
	for _, n := range []string{"qrels", "run", "out"} {
		_ = cmd.MarkFlagRequired(n)
	}
	rootCmd.AddCommand(cmd)
}
