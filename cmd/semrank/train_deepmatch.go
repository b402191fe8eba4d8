package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/deepmatch"
	"github.com/semrank/semrank/rerank"
)

func init() {
	for _, method := range []string{deepmatch.MethodDeepMatch, deepmatch.MethodBilinear, deepmatch.MethodSiamese} {
		trainCmd.AddCommand(newTrainDeepMatchCmd(method))
	}
}

// loadMerged reads BEIR directories as one dataset (see dataset.Merge).
func loadMerged(dirs []string) (*dataset.Dataset, error) {
	return (*trainIndex)(nil).loadAll(context.Background(), "--data", dirs)
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func newTrainDeepMatchCmd(method string) *cobra.Command {
	cfg := deepmatch.DefaultConfig(method)
	var data []string
	var dev, out, resolutions, neurons string
	short := map[string]string{
		deepmatch.MethodDeepMatch: "Train DeepMatch (Lu & Li 2013): a topic-patch deep network over the query–candidate interaction space",
		deepmatch.MethodBilinear:  "Train the low-rank bilinear (PLS-like) matching baseline of the DeepMatch paper",
		deepmatch.MethodSiamese:   "Train the Siamese-network matching baseline of the DeepMatch paper",
	}[method]
	cmd := &cobra.Command{
		Use:   method + " --data DIR [--data DIR2 ...] [--dev DIR] --out MODEL",
		Short: short,
		Long: short + `.

Training triples (query, relevant candidate, negative) come from the judged
candidate lists of the --data directories (BEIR form with candidates.trec);
negatives are the query's other candidates and random documents. The epoch
with the best dev MAP (map@10) is kept; without --dev every tenth training
query is held out. A training-curve plot is written beside the model
(MODEL.curve.png).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutputOf("--out", out, append([]string{dev}, data...)); err != nil {
				return err
			}
			if err := checkRetrainOutput(cmd.ErrOrStderr(), out); err != nil {
				return err
			}
			if err := checkTrainingDirs("--data", data, "--dev", dev); err != nil {
				return err
			}
			opts := map[string]any{
				"meta": cfg.Meta, "epochs": cfg.Epochs, "patience": cfg.Patience, "batch": cfg.Batch,
				"lr": cfg.LearningRate, "l2": cfg.L2, "margin": cfg.Margin, "init": cfg.Init,
				"neg_same": cfg.NegSameQuery, "neg_random": cfg.NegRandom,
			}
			switch method {
			case deepmatch.MethodDeepMatch:
				for flag, list := range map[string]string{"resolutions": resolutions, "neurons": neurons} {
					v, err := parseInts(list)
					if err != nil {
						return fmt.Errorf("--%s: %w", flag, err)
					}
					opts[flag] = v
				}
				opts["rank"], opts["committee"], opts["patch_words"] = cfg.Rank, cfg.Committee, cfg.PatchWords
				opts["lda_iterations"], opts["min_children"] = cfg.LDAIterations, cfg.MinChildren
			case deepmatch.MethodSiamese:
				opts["hidden"] = cfg.Hidden
				opts["dim"] = cfg.Dim
			case deepmatch.MethodBilinear:
				opts["dim"] = cfg.Dim
			}
			in := rerank.TrainInput{Seed: cfg.Seed}
			var err error
			if in.Train, err = loadMerged(data); err != nil {
				return err
			}
			if dev != "" {
				if in.Dev, err = dataset.Load(dev); err != nil {
					return err
				}
			}
			var done func()
			in.Progress, done = stepBar(method)
			err = trainModel(cmd.Context(), rerank.StageSpec{Type: method, Options: opts}, in, out)
			done()
			if err != nil {
				return err
			}
			m, err := deepmatch.Load(out, method)
			if err != nil {
				return err
			}
			plotPath := out + ".curve.png"
			if err := deepmatch.PlotCurve(plotPath, method+" training", m.Curve); err != nil {
				return err
			}
			fmt.Printf("%s: %d parameters, best dev MAP %.4f after %d epochs; wrote %s and %s\n",
				method, m.Params(), m.DevMAP, len(m.Curve), out, plotPath)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&data, "data", nil, "training BEIR directory with candidates.trec and qrels (repeatable)")
	f.StringVar(&dev, "dev", "", "dev BEIR directory for early stopping")
	f.StringVar(&out, "out", "", "model file to write")
	// Each method gets only the architecture flags it reads: the others
	// would be accepted, saved in the model's configuration and ignored.
	switch method {
	case deepmatch.MethodDeepMatch:
		f.StringVar(&resolutions, "resolutions", "20,50,100", "numbers of topics, one patch level each")
		f.StringVar(&neurons, "neurons", "2", "neurons per patch, finest level first; one value for all levels")
		f.IntVar(&cfg.Rank, "rank", cfg.Rank, "rank of each patch's bilinear filters")
		f.IntVar(&cfg.Committee, "committee", cfg.Committee, "committee-layer neurons")
		f.IntVar(&cfg.PatchWords, "patch-words", cfg.PatchWords, "at most this many words per patch side")
		f.IntVar(&cfg.LDAIterations, "lda-iterations", cfg.LDAIterations, "Gibbs sweeps per topic model")
		f.IntVar(&cfg.MinChildren, "min-children", cfg.MinChildren, "each coarse patch takes at least this many finer patches")
	case deepmatch.MethodSiamese:
		f.IntVar(&cfg.Hidden, "hidden", cfg.Hidden, "hidden units per tower")
		fallthrough
	case deepmatch.MethodBilinear:
		f.IntVar(&cfg.Dim, "dim", cfg.Dim, "latent dimension")
	}
	f.BoolVar(&cfg.Meta, "meta", cfg.Meta, "add candidate meta tokens: length bucket and asker flag")
	f.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "maximum epochs")
	f.IntVar(&cfg.Patience, "patience", cfg.Patience, "stop after this many epochs without a better dev MAP (0: train every epoch; the best is kept)")
	f.IntVar(&cfg.Batch, "batch", cfg.Batch, "triples per mini-batch")
	f.Float64Var(&cfg.LearningRate, "lr", cfg.LearningRate, "AdaGrad learning rate")
	f.Float64Var(&cfg.L2, "l2", cfg.L2, "ℓ2 regularisation")
	f.Float64Var(&cfg.Margin, "margin", cfg.Margin, "ranking margin")
	f.Float64Var(&cfg.Init, "init", cfg.Init, "scale of the random initial weights")
	f.IntVar(&cfg.NegSameQuery, "neg-same", cfg.NegSameQuery, "negatives per positive from the query's other candidates")
	f.IntVar(&cfg.NegRandom, "neg-random", cfg.NegRandom, "negatives per positive from random documents")
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed")
	_ = cmd.MarkFlagRequired("data")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}
