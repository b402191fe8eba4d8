package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/cmd/semrank/internal/tweakexp"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/tweak"
)

// corpusDF counts document frequencies over the corpora of sets.
func corpusDF(sets ...*dataset.Dataset) *tweak.DFTable {
	var texts []string
	for _, ds := range sets {
		for _, d := range ds.Corpus {
			texts = append(texts, d.FullText())
		}
	}
	return tweak.CountDF(texts)
}

func newTweakExperimentCmd() *cobra.Command {
	var trainDir, devDir, allDir, out string
	var folds int
	var noLog bool
	cmd := &cobra.Command{
		Use:   "tweak [--train DIR --dev DIR] [--all DIR --folds 5] [--out FILE]",
		Short: "Compare TWEAK (each loss) with TF-IDF cosine and the first-stage order, with paired tests",
		Long: `Run the TWEAK experiment in docs/RESULTS.md: TWEAK cosine trained with each
loss vs TF-IDF cosine, and each fused with the first-stage rank vs the
first-stage order. --train/--dev trains on one directory and reports on the
other; --all runs k-fold cross-validation over its queries. α is chosen on 20%
of the training queries, the fusion weight on the training queries; document
frequencies are counted over the corpora involved. Candidates without a
judgment count as not relevant, in training as in the metrics. Writes
markdown.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (trainDir == "") != (devDir == "") || (trainDir == "" && allDir == "") {
				return fmt.Errorf("give --train and --dev, or --all, or all three")
			}
			if err := checkHeldOut("--dev", devDir, "--train", trainDir); err != nil {
				return err
			}
			// Checked before the --train/--dev part runs: its report would
			// be lost to a --folds the cross-validation then refuses.
			if allDir == "" {
				if err := checkUnused(cmd, "applies to --all only", "folds"); err != nil {
					return err
				}
			} else if err := checkFolds(folds); err != nil {
				return err
			}
			// --out is written once the report is complete (creating it
			// first truncated it, even when it named an input).
			var w io.Writer = cmd.OutOrStdout()
			var buf bytes.Buffer
			if out != "" {
				if err := checkOutputOf("--out", out, []string{trainDir, devDir, allDir}); err != nil {
					return err
				}
				w = &buf
			}
			e := tweakexp.DefaultExperiment()
			e.QueryLog = !noLog
			e.Progress = func(msg string) { fmt.Fprintln(os.Stderr, msg) }
			ctx := cmd.Context()
			if trainDir != "" {
				train, err := dataset.Load(trainDir)
				if err != nil {
					return err
				}
				train = train.WithUnjudgedNotRelevant() // as train tweak learns
				dev, err := dataset.Load(devDir)
				if err != nil {
					return err
				}
				df := corpusDF(train, dev)
				o, err := e.Split(ctx, train, dev, df)
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "## Trained on %s, reported on %s\n\n", trainDir, devDir)
				if err := o.WriteMarkdown(w); err != nil {
					return err
				}
			}
			if allDir != "" {
				all, err := dataset.Load(allDir)
				if err != nil {
					return err
				}
				// Every fold learns as train tweak does; the metrics count
				// a candidate without a judgment not relevant either way.
				all = all.WithUnjudgedNotRelevant()
				df := corpusDF(all)
				o, err := e.CrossValidate(ctx, all, folds, df)
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "\n## %d-fold cross-validation over %s\n\n", folds, allDir)
				if err := o.WriteMarkdown(w); err != nil {
					return err
				}
			}
			if out != "" {
				return writeReport(out, buf.Bytes())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&trainDir, "train", "", "training BEIR directory")
	f.StringVar(&devDir, "dev", "", "BEIR directory reported on")
	f.StringVar(&allDir, "all", "", "BEIR directory for cross-validation")
	f.IntVar(&folds, "folds", 5, "cross-validation folds")
	f.BoolVar(&noLog, "no-query-log", false, "do not use the training queries as a query log (qf feature)")
	f.StringVar(&out, "out", "", "write the markdown report here instead of stdout")
	return cmd
}
