package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/tweak"
)

func init() {
	addPayloadFlag("tweak", "TWEAK model: store every document's learned term-weight vector (payload \"tweak\")",
		func(path string) (index.PayloadEncoder, error) {
			m, err := tweak.Load(path)
			if err != nil {
				return nil, err
			}
			return tweak.NewEncoder(m), nil
		})

	var dataDir, devDir, indexPath, pipelinePath, lossName, alphaStr, out string
	var noLog bool
	var maxIter, depth int
	cmd := &cobra.Command{
		Use:   "tweak --data DIR [--dev DIR] [--index PATH [--pipeline FILE]] [--loss preference|sse|log] [--alpha A|auto] --out MODEL",
		Short: "Train TWEAK learned term weights (Yih, 2009) from judged candidate lists",
		Long: `Train TWEAK: a term's weight is softplus(w·φ(term, text)) over nine features
(bias, log tf, log df, capitalised, first position, relative position, length,
in-title, query-log frequency), texts are compared by cosine, and w minimises
the chosen loss plus α/2·‖w‖² with L-BFGS.

Training pairs are DIR's queries and their candidates (candidates.trec),
labelled by qrels/test.tsv; a candidate of a judged query that it does not
judge counts as not relevant (grade 0), in --data and --dev. Document
frequencies come from --index when given, else from the corpora of --data and
--dev; they are stored in the model.
--index may be any Bleve index: a directory without corpus.jsonl then
learns from the index's documents, read through the fields of --pipeline,
and, without candidates.trec, from each query's first-stage top --depth
over the index, as a pipeline over that index reranks them; over an index
semrank did not build, document frequencies are counted in its documents.
--alpha auto chooses α from {0.003,…,1} by dev MAP, on --dev when given, else
on 20% of the training queries (then retrains on all of them).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPositive(cmd, "max-iter"); err != nil {
				return err
			}
			if err := checkOutputOf("--out", out, []string{dataDir, devDir}); err != nil {
				return err
			}
			if err := checkRetrainOutput(cmd.ErrOrStderr(), out); err != nil {
				return err
			}
			if err := checkTrainingDirs("--data", []string{dataDir}, "--dev", devDir); err != nil {
				return err
			}
			loss, err := tweak.ParseLoss(lossName)
			if err != nil {
				return err
			}
			auto := alphaStr == "auto"
			var alpha float64
			if !auto {
				if alpha, err = strconv.ParseFloat(alphaStr, 64); err != nil || alpha < 0 {
					return fmt.Errorf("--alpha %q: want a non-negative number or auto", alphaStr)
				}
			}
			ctx := cmd.Context()
			ti, err := openTrainIndex(ctx, indexPath, pipelinePath, depth)
			if err != nil {
				return err
			}
			defer ti.close()
			train, err := ti.load(ctx, "--data", dataDir, true)
			if err != nil {
				return err
			}
			// The losses read judged candidates only; unjudged ones
			// count as not relevant, as the evaluation counts them.
			train = train.WithUnjudgedNotRelevant()
			var dev *eval.Dataset
			if devDir != "" {
				if dev, err = ti.load(ctx, "--dev", devDir, true); err != nil {
					return err
				}
				dev = dev.WithUnjudgedNotRelevant()
			}
			// Counting document frequencies and analyzing every candidate
			// take a while on large collections, before the first
			// iteration's progress.
			fmt.Fprintf(cmd.ErrOrStderr(), "tweak: counting term statistics and building the training lists of %d queries\n", len(train.Queries))
			df, err := trainingDF(ctx, ti, train, dev)
			if err != nil {
				return err
			}
			st := tweak.Stats{DF: df}
			cfg := tweak.Config{Loss: loss, Alpha: alpha, QueryLog: !noLog, MaxIterations: maxIter}
			if cfg.QueryLog {
				st.QF = tweak.CountDF(queryTexts(train))
			}
			trainSet, err := tweak.NewSet(train, nil, st, cfg.QueryLog)
			if err != nil {
				return err
			}
			var devSet *tweak.Set
			if dev != nil {
				if devSet, err = tweak.NewSet(dev, nil, st, false); err != nil {
					return err
				}
			}
			bar := newBar(tweakRuns(auto, devSet != nil)*cfg.MaxIterations, "training")
			opt := tweak.Options{Dev: devSet, Progress: func(p tweak.Progress) {
				desc := fmt.Sprintf("iter %d loss %.4f", p.Iteration, p.Loss)
				if !math.IsNaN(p.DevMAP) {
					desc += fmt.Sprintf(" dev MAP %.4f", p.DevMAP)
				}
				bar.Describe(desc)
				_ = bar.Add(1)
			}}
			w := cmd.OutOrStdout()
			var m *tweak.Model
			if auto {
				m, err = trainAutoAlpha(ctx, w, train, trainSet, devSet, st, cfg, opt)
			} else {
				m, err = tweak.Train(ctx, trainSet, cfg, opt)
			}
			_ = bar.Finish()
			if err != nil {
				return err
			}
			if err := m.Save(out); err != nil {
				return err
			}
			pairs, prefs := trainSet.Pairs()
			fmt.Fprintf(w, "trained on %d queries (%d candidate pairs, %d preference pairs), loss %s, alpha %g\n",
				len(trainSet.Queries()), pairs, prefs, cfg.Loss, m.Config.Alpha)
			for i, name := range tweak.FeatureNames {
				fmt.Fprintf(w, "  w[%s] = %+.4f\n", name, m.W[i])
			}
			if devSet != nil {
				fmt.Fprintf(w, "dev (%d queries): MAP %.4f  AUC %.4f  MRR %.4f\n", len(devSet.Queries()),
					m.Metrics["dev_map@10"], m.Metrics["dev_auc"], m.Metrics["dev_mrr@10"])
			}
			fmt.Fprintf(w, "saved %s (model %s)\n", out, m.ID())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data", "", "training BEIR directory with qrels and candidates.trec")
	f.StringVar(&devDir, "dev", "", "dev BEIR directory (its metrics for the trained model, and the choice of --alpha auto)")
	trainIndexFlags(cmd, &indexPath, &pipelinePath, &depth)
	f.StringVar(&lossName, "loss", string(tweak.LossPreference), "loss: preference, sse or log")
	f.StringVar(&alphaStr, "alpha", "auto", "L2 weight α, or auto")
	f.BoolVar(&noLog, "no-query-log", false, "do not use the training queries as a query log (qf feature)")
	f.IntVar(&maxIter, "max-iter", tweak.DefaultConfig().MaxIterations, "maximum L-BFGS iterations")
	f.StringVar(&out, "out", "", "model file to write")
	_ = cmd.MarkFlagRequired("data")
	_ = cmd.MarkFlagRequired("out")
	trainCmd.AddCommand(cmd)
}

// trainAutoAlpha chooses α on the dev set, or on a held-out part of the
// training queries (then retraining on all of them).
func trainAutoAlpha(ctx context.Context, w io.Writer, train *eval.Dataset, trainSet, devSet *tweak.Set, st tweak.Stats, cfg tweak.Config, opt tweak.Options) (*tweak.Model, error) {
	innerTrain, innerDev := trainSet, devSet
	if devSet == nil {
		tq, dq, err := tweak.HoldOut(trainSet.Queries(), 0.2, 2016)
		if err != nil {
			return nil, err
		}
		if innerTrain, err = tweak.NewSet(train, tq, st, cfg.QueryLog); err != nil {
			return nil, err
		}
		if innerDev, err = tweak.NewSet(train, dq, st, cfg.QueryLog); err != nil {
			return nil, err
		}
	}
	m, table, err := tweak.SelectAlpha(ctx, innerTrain, innerDev, cfg, tweak.AlphaGrid, opt)
	if err != nil {
		return nil, err
	}
	for _, r := range table {
		fmt.Fprintf(w, "alpha %-6g dev MAP %.4f AUC %.4f\n", r.Alpha, r.DevMAP, r.DevAUC)
	}
	if devSet != nil {
		return m, nil
	}
	cfg.Alpha = m.Config.Alpha
	return tweak.Train(ctx, trainSet, cfg, opt)
}

// tweakRuns returns how many trainings train tweak runs: one, or with
// --alpha auto one per α of tweak.AlphaGrid and, without a dev set, the
// last one on every training query (see trainAutoAlpha).
func tweakRuns(auto, dev bool) int {
	switch {
	case !auto:
		return 1
	case dev:
		return len(tweak.AlphaGrid)
	default:
		return len(tweak.AlphaGrid) + 1
	}
}

// trainingDF freezes document frequencies from ti's index when it is a
// semrank index, counts them over its documents when it is another, and
// over the given corpora without one.
func trainingDF(ctx context.Context, ti *trainIndex, sets ...*eval.Dataset) (*tweak.DFTable, error) {
	var texts []string
	switch idx, semrank := ti.semrank(); {
	case semrank:
		return indexDF(idx)
	case ti != nil:
		docs, err := ti.documents(ctx)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			texts = append(texts, d.FullText())
		}
	default:
		for _, ds := range sets {
			if ds == nil {
				continue
			}
			for _, d := range ds.Corpus {
				texts = append(texts, d.FullText())
			}
		}
	}
	return tweak.CountDF(texts), nil
}

// indexDF freezes the document frequencies of every term of idx.
func indexDF(idx *index.Index) (*tweak.DFTable, error) {
	dict, err := idx.FieldDict(index.FieldAll)
	if err != nil {
		return nil, fmt.Errorf("index %s: term dictionary: %w", idx.Path, err)
	}
	var terms []string
	for {
		e, err := dict.Next()
		if err != nil {
			dict.Close()
			return nil, fmt.Errorf("index %s: term dictionary: %w", idx.Path, err)
		}
		if e == nil {
			break
		}
		terms = append(terms, e.Term)
	}
	dict.Close()
	return tweak.Snapshot(idx, terms)
}

func queryTexts(ds *eval.Dataset) []string {
	out := make([]string, len(ds.Queries))
	for i, q := range ds.Queries {
		out[i] = q.FullText()
	}
	return out
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
			e := tweak.DefaultExperiment()
			e.QueryLog = !noLog
			e.Progress = func(msg string) { fmt.Fprintln(os.Stderr, msg) }
			ctx := cmd.Context()
			if trainDir != "" {
				train, err := eval.LoadDataset(trainDir)
				if err != nil {
					return err
				}
				train = train.WithUnjudgedNotRelevant() // as train tweak learns
				dev, err := eval.LoadDataset(devDir)
				if err != nil {
					return err
				}
				df, _ := trainingDF(ctx, nil, train, dev)
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
				all, err := eval.LoadDataset(allDir)
				if err != nil {
					return err
				}
				// Every fold learns as train tweak does; the metrics count
				// a candidate without a judgment not relevant either way.
				all = all.WithUnjudgedNotRelevant()
				df, _ := trainingDF(ctx, nil, all)
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
