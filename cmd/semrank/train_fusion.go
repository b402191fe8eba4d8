package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/learn"
	"github.com/semrank/semrank/rerank/offline"
	"github.com/semrank/semrank/rerank/publish"
)

func init() {
	var dataDir, validDir, indexPath, pipelinePath, method, loss, out string
	var l2 float64
	var trees, leaves int
	cmd := &cobra.Command{
		Use:   "fusion --data DIR [--index PATH] --pipeline FILE --out MODEL",
		Short: "Learn linear fusion weights for a pipeline's stages from judgments",
		Long: `Learn the weights of the linear fusion of a pipeline's stage scores, the
first-stage score and the first-stage rank from the judged queries of DIR.
Point the pipeline's fusion.model at the written file to use them, or write
over the fusion model the pipeline names (its sha256 line, if listed, is
updated). The stages' models should not have been trained on DIR's queries,
or the fusion learns to trust overfitted stages.

--method lambdamart learns boosted trees over the same scores (z-normalised and
raw) instead. Each method's flags (linear: --loss, --l2; lambdamart: --valid,
--trees, --leaves) are refused with the other method.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pipelinePath = pipelineFile(pipelinePath)
			if err := checkFusionFlags(method, loss, l2, trees, leaves); err != nil {
				return err
			}
			// One method's flags, refused for the other rather than ignored.
			other, unused := "lambdamart", []string{"valid", "trees", "leaves"}
			if method == "lambdamart" {
				other, unused = "linear", []string{"loss", "l2"}
			}
			if err := checkUnused(cmd, "applies to --method "+other+" only", unused...); err != nil {
				return err
			}
			// The fusion model the pipeline names may be retrained in
			// place; the pipeline file, its stage models and the data may
			// not be overwritten.
			inputs := append(datasetFiles(dataDir), pipelineFiles(pipelinePath, false)...)
			if validDir != "" {
				inputs = append(inputs, datasetFiles(validDir)...)
			}
			if err := checkOutput("--out", out, inputs...); err != nil {
				return err
			}
			if err := checkModelOutput("--out", out); err != nil {
				return err
			}
			if err := checkTrainingDirs("--data", []string{dataDir}, "--valid", validDir); err != nil {
				return err
			}
			if err := checkFusionInPlace(pipelinePath, out, method); err != nil {
				return err
			}
			ctx := cmd.Context()
			ds, err := fusionDataset(ctx, dataDir, indexPath, pipelinePath)
			if err != nil {
				return err
			}
			o, err := offline.Open(ctx, pipelinePath, indexPath, ds, nil, rerank.StagesOnly())
			if err != nil {
				return err
			}
			defer o.Close()
			exs, err := offline.Examples(ctx, o.Index, ds, o.Pipeline)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if method == "lambdamart" {
				var valid []learn.Example
				if validDir != "" {
					vds, err := dataset.Load(validDir)
					if err != nil {
						return err
					}
					vo, err := offline.Open(ctx, pipelinePath, "", vds, nil, rerank.StagesOnly())
					if err != nil {
						return err
					}
					valid, err = offline.Examples(ctx, vo.Index, vds, vo.Pipeline)
					vo.Close()
					if err != nil {
						return err
					}
				}
				bar := newBar(trees, "boosting")
				m, err := learn.TrainLambdaMART(exs, valid, learn.LambdaMARTOptions{Trees: trees, Leaves: leaves,
					Progress: func(r int, tm, vm float64) {
						bar.Describe(fmt.Sprintf("boosting train MAP %.4f valid MAP %.4f", tm, vm))
						bar.Set(r)
					}})
				bar.Finish()
				if err != nil {
					return err
				}
				b := m.Bundle()
				b.Manifest.TrainingFingerprint = ds.Fingerprint()
				if err := saveFusion(w, b, out, pipelinePath); err != nil {
					return err
				}
				fmt.Fprintf(w, "wrote %s: %d trees from %d judged queries\n", out, len(m.Trees), len(exs))
				return nil
			}
			lin, err := learn.TrainLinear(exs, learn.LinearOptions{Loss: loss, L2: l2})
			if err != nil {
				return err
			}
			b := lin.Bundle()
			b.Manifest.TrainingFingerprint = ds.Fingerprint()
			if err := saveFusion(w, b, out, pipelinePath); err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %s from %d judged queries\n", out, len(exs))
			names := make([]string, 0, len(lin.Weights))
			for n := range lin.Weights {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				fmt.Fprintf(w, "  %-14s %+.4f\n", n, lin.Weights[n])
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data", "", "BEIR directory with judgments")
	f.StringVar(&indexPath, "index", "", "index path (default: a temporary index of DIR's corpus)")
	f.StringVar(&pipelinePath, "pipeline", "", "pipeline file whose stages are fused (or a directory holding pipeline.yaml)")
	f.StringVar(&method, "method", "linear", "linear (learned weights) or lambdamart (boosted trees)")
	f.StringVar(&validDir, "valid", "", "lambdamart: BEIR directory for early stopping")
	f.IntVar(&trees, "trees", 300, "lambdamart: maximum number of trees")
	f.IntVar(&leaves, "leaves", 8, "lambdamart: leaves per tree")
	f.StringVar(&loss, "loss", "pairwise", "linear: pairwise (RankNet logistic) or logistic (pointwise)")
	f.Float64Var(&l2, "l2", 1e-3, "linear: L2 penalty on the weights")
	f.StringVar(&out, "out", "", "output fusion model")
	for _, n := range []string{"data", "pipeline", "out"} {
		_ = cmd.MarkFlagRequired(n)
	}
	trainCmd.AddCommand(cmd)
}

// checkFusionInPlace refuses to retrain the fusion model the pipeline
// names (out) with another method than the pipeline's: the pipeline could
// no longer load it.
func checkFusionInPlace(pipelinePath, out, method string) error {
	cfg, err := rerank.ReadConfig(pipelinePath)
	if err != nil || cfg.Fusion.Model == "" || !sameFile(out, rerank.Resolve(filepath.Dir(pipelinePath), cfg.Fusion.Model)) {
		return nil // loading the pipeline reports its own errors
	}
	have := strings.ToLower(cfg.Fusion.Method)
	if have == "" {
		have = "linear"
	}
	if have != method {
		return fmt.Errorf("--out %s is the %s fusion model %s names; a %s model there would stop it from loading: write it elsewhere, or change the pipeline's fusion method first", out, have, pipelinePath, method)
	}
	return nil
}

// saveFusion saves the fusion model b to out. When the pipeline lists
// out's checksum (a model retrained in place), it updates it, so that the
// pipeline keeps loading with its new model.
func saveFusion(w io.Writer, b *models.Bundle, out, pipelinePath string) error {
	if err := b.Save(out); err != nil {
		return err
	}
	updated, err := publish.UpdateChecksum(pipelinePath, out)
	if err != nil {
		return fmt.Errorf("wrote %s, but updating its sha256 in %s failed (the pipeline will refuse the new model until that line is updated or removed): %w", out, pipelinePath, err)
	}
	if updated {
		fmt.Fprintf(w, "updated the sha256 of %s in %s\n", out, pipelinePath)
	}
	return nil
}

// checkFusionFlags rejects flag values the trainers would otherwise read as
// a default (an unknown method or loss) or turn into a useless model (no
// trees, single-leaf trees, all-zero weights from a negative L2).
func checkFusionFlags(method, loss string, l2 float64, trees, leaves int) error {
	switch method {
	case "linear":
		if loss != "pairwise" && loss != "logistic" {
			return fmt.Errorf("--loss %q: want pairwise or logistic", loss)
		}
		if !(l2 >= 0) || math.IsInf(l2, 0) {
			return fmt.Errorf("--l2 %g: want a non-negative number", l2)
		}
	case "lambdamart":
		if trees < 1 {
			return fmt.Errorf("--trees %d: want at least 1", trees)
		}
		if leaves < 2 {
			return fmt.Errorf("--leaves %d: want at least 2", leaves)
		}
	default:
		return fmt.Errorf("--method %q: want linear or lambdamart", method)
	}
	return nil
}

// fusionDataset reads the judged queries the fusion learns from: DIR as it
// is, or, with an index and no corpus.jsonl in DIR, over the index's
// documents read through the pipeline's fields (see trainIndex). Their
// candidates are the pipeline's searches over the index, as it will run,
// never a first-stage list written for them.
func fusionDataset(ctx context.Context, dataDir, indexPath, pipelinePath string) (*dataset.Dataset, error) {
	if indexPath == "" {
		return loadDataset(dataDir)
	}
	ti, err := openTrainIndex(ctx, indexPath, pipelinePath, 1)
	if err != nil {
		return nil, err
	}
	defer ti.close()
	return ti.load(ctx, "--data", dataDir, false)
}
