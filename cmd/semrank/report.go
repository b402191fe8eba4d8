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

// reportOptions are the flags of semrank report.
type reportOptions struct {
	qrelsPath, out, metrics, format string
	runs                            []string
	ignoreUnjudged                  bool
}

// newReportCmd returns semrank report.
func newReportCmd() *cobra.Command {
	var o reportOptions
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
		RunE: func(cmd *cobra.Command, _ []string) error { return runReport(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.qrelsPath, "qrels", "", "judgments")
	f.StringArrayVar(&o.runs, "run", nil, "NAME=FILE (repeatable; the first is the baseline; the name ends at the first \"=\")")
	f.StringVar(&o.out, "out", "", "output directory")
	f.StringVar(&o.metrics, "metrics", "map@10,map,mrr@10,ndcg@10,p@1,auc", "table metrics; the first is plotted and tested")
	f.StringVar(&o.format, "format", "png", "plot format: png or svg")
	f.BoolVar(&o.ignoreUnjudged, "ignore-unjudged", false, "drop run queries that have no judgments")
	for _, n := range []string{"qrels", "run", "out"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

// runReport runs semrank report.
func runReport(cmd *cobra.Command, o reportOptions) error {
	q, err := readJudgments(o.qrelsPath)
	if err != nil {
		return err
	}
	ms, err := eval.ParseMetrics(o.metrics)
	if err != nil {
		return err
	}
	var named []report.Named
	seen := map[string]bool{}
	for _, r := range o.runs {
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
		if o.ignoreUnjudged {
			if run, err = judgedOnly(run, q, o.qrelsPath); err != nil {
				return err
			}
		}
		if n := q.UnrankedNote(run, path); n != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", n)
		}
		named = append(named, report.Named{Name: name, Run: run})
	}
	if err := report.Write(o.out, q, named, report.Options{Metrics: ms, Format: o.format}); err != nil {
		return unjudgedHint(err)
	}
	if len(named) == 1 {
		fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/report.md, depth.%s\n", o.out, o.format)
		return nil
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/report.md, ap-change.%s, window.%s, depth.%s\n", o.out, o.format, o.format, o.format)
	return nil
}
