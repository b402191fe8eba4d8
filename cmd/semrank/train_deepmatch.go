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
	"github.com/semrank/semrank/rerank/stages"
)

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

// trainDeepMatchOptions are the flags of semrank train deepmatch, bilinear or siamese.
type trainDeepMatchOptions struct {
	method                         string
	opts                           any // the flags fill it
	seed                           uint64
	data                           []string
	dev, out, resolutions, neurons string
}

// newTrainDeepMatchCmd returns semrank train deepmatch, bilinear or siamese.
func newTrainDeepMatchCmd(method string) *cobra.Command {
	var o trainDeepMatchOptions
	o.method = method
	o.opts = stages.MatchOptionsFor(method)
	o.seed = deepmatch.DefaultConfig(method).Seed
	short := map[string]string{
		deepmatch.MethodDeepMatch: "Train DeepMatch (Lu & Li 2013): a topic-patch deep network over the query–candidate interaction space",
		deepmatch.MethodBilinear:  "Train the low-rank bilinear (PLS-like) matching baseline of the DeepMatch paper",
		deepmatch.MethodSiamese:   "Train the Siamese-network matching baseline of the DeepMatch paper",
	}[method]
	cmd := &cobra.Command{
		Use:   o.method + " --data DIR [--data DIR2 ...] [--dev DIR] --out MODEL",
		Short: short,
		Long: short + `.

Training triples (query, relevant candidate, negative) come from the judged
candidate lists of the --data directories (BEIR form with candidates.trec);
negatives are the query's other candidates and random documents. The epoch
with the best dev MAP (map@10) is kept; without --dev every tenth training
query is held out. A training-curve plot is written beside the model
(MODEL.curve.png).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrainDeepMatch(cmd, o) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.data, "data", nil, "training BEIR directory with candidates.trec and qrels (repeatable)")
	f.StringVar(&o.dev, "dev", "", "dev BEIR directory for early stopping")
	f.StringVar(&o.out, "out", "", "model file to write")
	// Each method gets only the architecture flags it reads: the others
	// would be accepted, saved in the model's configuration and ignored.
	var m *stages.MatchOptions
	switch s := o.opts.(type) {
	case *stages.DeepMatchOptions:
		m = &s.MatchOptions
		f.StringVar(&o.resolutions, "resolutions", "20,50,100", "numbers of topics, one patch level each")
		f.StringVar(&o.neurons, "neurons", "2", "neurons per patch, finest level first; one value for all levels")
		f.IntVar(&s.Rank, "rank", s.Rank, "rank of each patch's bilinear filters")
		f.IntVar(&s.Committee, "committee", s.Committee, "committee-layer neurons")
		f.IntVar(&s.PatchWords, "patch-words", s.PatchWords, "at most this many words per patch side")
		f.IntVar(&s.LDAIterations, "lda-iterations", s.LDAIterations, "Gibbs sweeps per topic model")
		f.IntVar(&s.MinChildren, "min-children", s.MinChildren, "each coarse patch takes at least this many finer patches")
	case *stages.SiameseOptions:
		m = &s.MatchOptions
		f.IntVar(&s.Hidden, "hidden", s.Hidden, "hidden units per tower")
		f.IntVar(&s.Dim, "dim", s.Dim, "latent dimension")
	case *stages.BilinearOptions:
		m = &s.MatchOptions
		f.IntVar(&s.Dim, "dim", s.Dim, "latent dimension")
	}
	f.BoolVar(&m.Meta, "meta", m.Meta, "add candidate meta tokens: length bucket and asker flag")
	f.IntVar(&m.Epochs, "epochs", m.Epochs, "maximum epochs")
	f.IntVar(&m.Patience, "patience", m.Patience, "stop after this many epochs without a better dev MAP (0: train every epoch; the best is kept)")
	f.IntVar(&m.Batch, "batch", m.Batch, "triples per mini-batch")
	f.Float64Var(&m.LR, "lr", m.LR, "AdaGrad learning rate")
	f.Float64Var(&m.L2, "l2", m.L2, "ℓ2 regularisation")
	f.Float64Var(&m.Margin, "margin", m.Margin, "ranking margin")
	f.Float64Var(&m.Init, "init", m.Init, "scale of the random initial weights")
	f.IntVar(&m.NegSame, "neg-same", m.NegSame, "negatives per positive from the query's other candidates")
	f.IntVar(&m.NegRandom, "neg-random", m.NegRandom, "negatives per positive from random documents")
	f.Uint64Var(&o.seed, "seed", o.seed, "random seed")
	_ = cmd.MarkFlagRequired("data")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// runTrainDeepMatch runs semrank train deepmatch, bilinear or siamese.
func runTrainDeepMatch(cmd *cobra.Command, o trainDeepMatchOptions) error {
	if err := checkOutputOf("--out", o.out, append([]string{o.dev}, o.data...)); err != nil {
		return err
	}
	if err := checkRetrainOutput(cmd.ErrOrStderr(), o.out); err != nil {
		return err
	}
	if err := checkTrainingDirs("--data", o.data, "--dev", o.dev); err != nil {
		return err
	}
	if dm, ok := o.opts.(*stages.DeepMatchOptions); ok {
		var err error
		if dm.Resolutions, err = parseInts(o.resolutions); err != nil {
			return fmt.Errorf("--resolutions: %w", err)
		}
		if dm.Neurons, err = parseInts(o.neurons); err != nil {
			return fmt.Errorf("--neurons: %w", err)
		}
	}
	spec, err := stageSpec(o.method, o.opts)
	if err != nil {
		return err
	}
	in := rerank.TrainInput{Seed: o.seed}
	if in.Train, err = loadMerged(o.data); err != nil {
		return err
	}
	if o.dev != "" {
		if in.Dev, err = dataset.Load(o.dev); err != nil {
			return err
		}
	}
	var done func()
	in.Progress, done = stepBar(o.method)
	err = trainModel(cmd.Context(), spec, in, o.out)
	done()
	if err != nil {
		return err
	}
	m, err := deepmatch.Load(o.out, o.method)
	if err != nil {
		return err
	}
	plotPath := o.out + ".curve.png"
	if err := deepmatch.PlotCurve(plotPath, o.method+" training", m.Curve); err != nil {
		return err
	}
	fmt.Printf("%s: %d parameters, best dev MAP %.4f after %d epochs; wrote %s and %s\n",
		o.method, m.Params(), m.DevMAP, len(m.Curve), o.out, plotPath)
	return nil
}
