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

// trainFusionOptions are the flags of semrank train fusion.
type trainFusionOptions struct {
	dataDir, validDir, indexPath, pipelinePath, method, loss, out string
	l2                                                            float64
	trees, leaves                                                 int
}

// newTrainFusionCmd returns semrank train fusion.
func newTrainFusionCmd() *cobra.Command {
	var o trainFusionOptions
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
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrainFusion(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dataDir, "data", "", "BEIR directory with judgments")
	f.StringVar(&o.indexPath, "index", "", "index path (default: a temporary index of DIR's corpus)")
	f.StringVar(&o.pipelinePath, "pipeline", "", "pipeline file whose stages are fused (or a directory holding pipeline.yaml)")
	f.StringVar(&o.method, "method", "linear", "linear (learned weights) or lambdamart (boosted trees)")
	f.StringVar(&o.validDir, "valid", "", "lambdamart: BEIR directory for early stopping")
	f.IntVar(&o.trees, "trees", 300, "lambdamart: maximum number of trees")
	f.IntVar(&o.leaves, "leaves", 8, "lambdamart: leaves per tree")
	f.StringVar(&o.loss, "loss", "pairwise", "linear: pairwise (RankNet logistic) or logistic (pointwise)")
	f.Float64Var(&o.l2, "l2", 1e-3, "linear: L2 penalty on the weights")
	f.StringVar(&o.out, "out", "", "output fusion model")
	for _, n := range []string{"data", "pipeline", "out"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

// runTrainFusion runs semrank train fusion.
func runTrainFusion(cmd *cobra.Command, o trainFusionOptions) error {
	o.pipelinePath = pipelineFile(o.pipelinePath)
	if err := checkTrainFusionFlags(cmd, o); err != nil {
		return err
	}
	ctx := cmd.Context()
	ds, err := fusionDataset(ctx, o.dataDir, o.indexPath, o.pipelinePath)
	if err != nil {
		return err
	}
	opened, err := offline.Open(ctx, o.pipelinePath, o.indexPath, ds, nil, rerank.StagesOnly())
	if err != nil {
		return err
	}
	defer opened.Close()
	exs, err := offline.Examples(ctx, opened.Index, ds, opened.Pipeline)
	if err != nil {
		return err
	}
	if o.method == "lambdamart" {
		return trainLambdaMARTFusion(cmd, o, ds, exs)
	}
	return trainLinearFusion(cmd, o, ds, exs)
}

// checkTrainFusionFlags refuses, before any work, flags of the other
// method than --method's and an --out that would overwrite an input.
func checkTrainFusionFlags(cmd *cobra.Command, o trainFusionOptions) error {
	if err := checkFusionFlags(o.method, o.loss, o.l2, o.trees, o.leaves); err != nil {
		return err
	}
	// One method's flags, refused for the other rather than ignored.
	other, unused := "lambdamart", []string{"valid", "trees", "leaves"}
	if o.method == "lambdamart" {
		other, unused = "linear", []string{"loss", "l2"}
	}
	if err := checkUnused(cmd, "applies to --method "+other+" only", unused...); err != nil {
		return err
	}
	// The fusion model the pipeline names may be retrained in
	// place; the pipeline file, its stage models and the data may
	// not be overwritten.
	inputs := append(datasetFiles(o.dataDir), pipelineFiles(o.pipelinePath, false)...)
	if o.validDir != "" {
		inputs = append(inputs, datasetFiles(o.validDir)...)
	}
	if err := checkOutput("--out", o.out, inputs...); err != nil {
		return err
	}
	if err := checkModelOutput("--out", o.out); err != nil {
		return err
	}
	if err := checkTrainingDirs("--data", []string{o.dataDir}, "--valid", o.validDir); err != nil {
		return err
	}
	if err := checkFusionInPlace(o.pipelinePath, o.out, o.method); err != nil {
		return err
	}
	return nil
}

// trainLambdaMARTFusion trains a LambdaMART fusion on exs (stopping on
// --valid's examples when given) and saves it.
func trainLambdaMARTFusion(cmd *cobra.Command, o trainFusionOptions, ds *dataset.Dataset, exs []learn.Example) error {
	ctx, w := cmd.Context(), cmd.OutOrStdout()
	var valid []learn.Example
	if o.validDir != "" {
		vds, err := dataset.Load(o.validDir)
		if err != nil {
			return err
		}
		vo, err := offline.Open(ctx, o.pipelinePath, "", vds, nil, rerank.StagesOnly())
		if err != nil {
			return err
		}
		valid, err = offline.Examples(ctx, vo.Index, vds, vo.Pipeline)
		vo.Close()
		if err != nil {
			return err
		}
	}
	bar := newBar(o.trees, "boosting")
	m, err := learn.TrainLambdaMART(exs, valid, learn.LambdaMARTOptions{Trees: o.trees, Leaves: o.leaves,
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
	if err := saveFusion(w, b, o.out, o.pipelinePath); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s: %d trees from %d judged queries\n", o.out, len(m.Trees), len(exs))
	return nil
}

// trainLinearFusion trains a linear fusion on exs, saves it and prints
// its weights.
func trainLinearFusion(cmd *cobra.Command, o trainFusionOptions, ds *dataset.Dataset, exs []learn.Example) error {
	w := cmd.OutOrStdout()
	lin, err := learn.TrainLinear(exs, learn.LinearOptions{Loss: o.loss, L2: o.l2})
	if err != nil {
		return err
	}
	b := lin.Bundle()
	b.Manifest.TrainingFingerprint = ds.Fingerprint()
	if err := saveFusion(w, b, o.out, o.pipelinePath); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s from %d judged queries\n", o.out, len(exs))
	names := make([]string, 0, len(lin.Weights))
	for n := range lin.Weights {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-14s %+.4f\n", n, lin.Weights[n])
	}
	return nil
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
