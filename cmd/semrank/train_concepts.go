package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/dse"
	"github.com/semrank/semrank/models/lsa"
	"github.com/semrank/semrank/models/s2net"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/stages"
)

// errNoPreference says that no query of the directories dirs (flag's) has
// both a relevant and a not relevant candidate, and how to get such lists.
func errNoPreference(method, flag string, dirs []string) error {
	return fmt.Errorf("%s %s: no query has both a relevant and a not-relevant candidate, so %s has nothing to learn from or stop early on "+
		"(held-out MAP would be 1 whatever it learned); without %s a query's candidates are its judged documents alone: "+
		"write BM25 candidate lists, where documents not judged count as not relevant, with "+
		"semrank run --data DIR --index IDX --out DIR/%s",
		flag, strings.Join(dirs, " "), method, dataset.CandidatesFile, dataset.CandidatesFile)
}

// trainConceptOptions are the flags of semrank train lsa, s2net or dse.
type trainConceptOptions struct {
	method                            string
	data, corpora                     []string
	dev, out, indexPath, pipelinePath string
	depth                             int
	seed                              uint64
	opts                              any // the method's options struct, which its flags fill
}

// newTrainConceptCmd returns semrank train lsa, s2net or dse.
func newTrainConceptCmd(method string) *cobra.Command {
	var o trainConceptOptions
	o.method = method
	short := map[string]string{
		"lsa":   "Train LSA: truncated SVD of the TF-IDF term–document matrix",
		"s2net": "Train S2Net (Yih et al. 2011): a discriminative projection to concept vectors, by L-BFGS",
		"dse":   "Train DSE (Wu, Min & Bai): a deep RBM-pretrained network fine-tuned on ranking triples",
	}[method]
	cmd := &cobra.Command{
		Use:   o.method + " --data DIR [--data DIR ...] [--corpus DIR ...] [--dev DIR] [--index PATH [--pipeline FILE]] [--dim K] --out MODEL",
		Short: short,
		Long: short + `.

--data directories give judged candidate lists (BEIR with candidates.trec
and qrels) and their texts; --corpus directories add unlabelled text (the
vocabulary, LSA, DSE pretraining) and comparable pairs (title–body,
query–relevant document). With --index (any Bleve index), a --data or
--dev directory without corpus.jsonl learns from the index's documents,
read through the fields of --pipeline, and, without candidates.trec, from
each query's first-stage top --depth over the index. ` + map[string]string{
			"lsa": `LSA learns from the text alone: it has no iterations to stop
early, and --dev only reports its map@10.`,
			"s2net": `Early stopping watches map@10 on --dev, or on a fifth of the
training queries without it. A training-curve plot is written beside the
model (MODEL.curve.png).`,
			"dse": `Early stopping watches map@10 on --dev, or on a fifth of the
training queries without it. A training-curve plot is written beside the
model (MODEL.curve.png).`,
		}[o.method] + ` Store document vectors at index time with
"semrank index --` + o.method + ` MODEL".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrainConcept(cmd, o) },
	}
	trainIndexFlags(cmd, &o.indexPath, &o.pipelinePath, &o.depth)
	f := cmd.Flags()
	f.StringArrayVar(&o.data, "data", nil, "training BEIR directory with judged candidate lists (repeatable)")
	f.StringArrayVar(&o.corpora, "corpus", nil, "extra BEIR directory: unlabelled text and comparable pairs (repeatable)")
	f.StringVar(&o.dev, "dev", "", "dev BEIR directory for early stopping")
	f.StringVar(&o.out, "out", "", "model file to write")
	o.opts = conceptFlags(f, o.method)
	if o.method != "lsa" {
		f.Uint64Var(&o.seed, "seed", 1, "random seed")
	}
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// runTrainConcept runs semrank train lsa, s2net or dse.
func runTrainConcept(cmd *cobra.Command, o trainConceptOptions) error {
	if err := checkConceptFlags(cmd, o); err != nil {
		return err
	}
	ctx := cmd.Context()
	ti, err := openTrainIndex(ctx, o.indexPath, o.pipelinePath, o.depth)
	if err != nil {
		return err
	}
	defer ti.close()
	in, devLists, err := conceptInput(ctx, ti, o)
	if err != nil {
		return err
	}
	spec, err := stageSpec(o.method, o.opts)
	if err != nil {
		return err
	}
	var curve []concept.Iteration
	bar, done := stepBar(o.method)
	in.Progress = func(s rerank.TrainStep) {
		curve = append(curve, concept.Iteration{Iter: s.Iter, Phase: s.Phase, Loss: s.Loss, DevMAP: s.DevMAP})
		bar(s)
	}
	err = trainModel(ctx, spec, in, o.out)
	done()
	if err != nil {
		return err
	}
	return reportConcept(cmd, o, curve, devLists)
}

// checkConceptFlags refuses, before any work, flag values train METHOD
// cannot use and an --out that would overwrite its inputs.
func checkConceptFlags(cmd *cobra.Command, o trainConceptOptions) error {
	if err := checkPositive(cmd, "dim", "max-terms", "gamma", "iter", "patience", "d", "pretrain-epochs", "epochs", "lr"); err != nil {
		return err
	}
	if err := checkNonNegative(cmd, "max-pairs"); err != nil {
		return err
	}
	if err := checkOutputOf("--out", o.out, append(append([]string{o.dev}, o.data...), o.corpora...)); err != nil {
		return err
	}
	if err := checkRetrainOutput(cmd.ErrOrStderr(), o.out); err != nil {
		return err
	}
	return checkTrainingDirs("--data", o.data, "--dev", o.dev)
}

// conceptInput reads what train METHOD learns from: the --data, --corpus
// and --dev directories (through ti), and the judged lists of --dev.
// Lists whose candidates all share one grade give s2net and dse no
// ranking to learn or to stop early on (held-out MAP would be 1 whatever
// the model): directories without any are refused.
func conceptInput(ctx context.Context, ti *trainIndex, o trainConceptOptions) (rerank.TrainInput, []concept.Judged, error) {
	in := rerank.TrainInput{Seed: o.seed}
	var err error
	if in.Train, err = ti.loadAll(ctx, "--data", o.data); err != nil {
		return in, nil, err
	}
	for _, dir := range o.corpora {
		ds, err := dataset.Load(dir)
		if err != nil {
			return in, nil, err
		}
		in.Corpora = append(in.Corpora, ds)
	}
	lists, err := concept.JudgedLists(in.Train)
	if err != nil {
		return in, nil, err
	}
	var devLists []concept.Judged
	if o.dev != "" {
		if in.Dev, err = ti.load(ctx, "--dev", o.dev, true); err != nil {
			return in, nil, err
		}
		if devLists, err = concept.JudgedLists(in.Dev); err != nil {
			return in, nil, err
		}
	}
	if o.method != "lsa" {
		if !slices.ContainsFunc(lists, concept.Judged.HasPreference) {
			return in, nil, errNoPreference(o.method, "--data", o.data)
		}
		if o.dev != "" && !slices.ContainsFunc(devLists, concept.Judged.HasPreference) {
			return in, nil, errNoPreference(o.method, "--dev", []string{o.dev})
		}
	}
	return in, devLists, nil
}

// reportConcept prints what train METHOD wrote, with the training curve's
// plot and best held-out MAP, LSA's dev MAP and DSE's mixing weight.
func reportConcept(cmd *cobra.Command, o trainConceptOptions, curve []concept.Iteration, devLists []concept.Judged) error {
	var summary string
	switch o.method {
	case "lsa":
		if len(devLists) > 0 {
			m, err := lsa.Load(o.out)
			if err != nil {
				return err
			}
			summary = fmt.Sprintf("dev MAP %.4f", concept.MAP(devLists, concept.CosineScores(m, devLists)))
		}
	case "dse":
		m, err := dse.Load(o.out)
		if err != nil {
			return err
		}
		summary = fmt.Sprintf("TF-IDF mix λ=%g", m.Config.Mix)
		if stalled(curve, "finetune") {
			fmt.Fprintln(cmd.ErrOrStderr(), "note: dse: the fine-tuning loss never changed: the network learned nothing from the triples (saturated units?); try another --lr, --d or --input")
		}
	}
	fmt.Printf("%s: wrote %s", o.method, o.out)
	if len(curve) > 0 {
		plotPath := o.out + ".curve.png"
		if err := concept.PlotCurve(plotPath, o.method+" training", curve); err != nil {
			return err
		}
		best := math.Inf(-1)
		for _, it := range curve {
			if !math.IsNaN(it.DevMAP) {
				best = math.Max(best, it.DevMAP)
			}
		}
		fmt.Printf(" and %s", plotPath)
		if !math.IsInf(best, -1) {
			fmt.Printf("; best held-out MAP %.4f", best)
		}
	}
	if summary != "" {
		fmt.Printf("; %s", summary)
	}
	fmt.Println()
	return nil
}

// conceptFlags defines the flags of train METHOD (lsa, s2net or dse) that
// set the stage type's options, and returns the options struct they fill.
func conceptFlags(f *pflag.FlagSet, method string) any {
	switch method {
	case "lsa":
		o := stages.DefaultLSAOptions()
		f.IntVar(&o.Dim, "dim", 100, "concept dimensions k")
		f.IntVar(&o.MaxTerms, "max-terms", 10000, "vocabulary size")
		return &o
	case "s2net":
		o := stages.DefaultS2NetOptions()
		o.Patience = new(int)
		f.IntVar(&o.Dim, "dim", 100, "concept dimensions k")
		f.IntVar(&o.MaxTerms, "max-terms", 10000, "vocabulary size")
		f.StringVar(&o.Init, "init", "lsa", "initial projection: lsa or random")
		f.Float64Var(&o.Gamma, "gamma", 10, "loss scale γ")
		f.IntVar(&o.Iter, "iter", 100, "L-BFGS iterations")
		f.IntVar(o.Patience, "patience", 10, "stop after this many iterations without a better dev MAP")
		f.Float64Var(&o.PairWeight, "pair-weight", 1, "weight of the comparable-pair loss (<0: none)")
		f.IntVar(&o.MaxPairs, "max-pairs", 0, "use at most this many comparable pairs (0: all)")
		return &o
	}
	o := stages.DefaultDSEOptions()
	o.PretrainEpochs, o.LR, o.Patience, o.Mix = new(int), new(float64), new(int), new(float64)
	f.IntVar(&o.C, "dim", 50, "embedding dimensions C")
	f.IntVar(&o.D, "d", 500, "input vocabulary: the top-D terms")
	f.StringVar(&o.Input, "input", "binary", "input: binary or tfidf-l2")
	f.IntVar(o.PretrainEpochs, "pretrain-epochs", 5, "CD-1 epochs per RBM")
	f.IntVar(&o.Epochs, "epochs", 20, "fine-tuning epochs")
	f.Float64Var(o.LR, "lr", 0.001, "fine-tuning learning rate")
	f.IntVar(o.Patience, "patience", 5, "stop after this many epochs without a better dev MAP")
	f.Float64Var(o.Mix, "mix", -1, "TF-IDF mixing weight λ (<0: choose on the dev lists)")
	return &o
}

// stalled reports whether the curve's iterations of phase, two or more,
// all have the same loss.
func stalled(curve []concept.Iteration, phase string) bool {
	n, first := 0, 0.0
	for _, it := range curve {
		if it.Phase != phase {
			continue
		}
		if n == 0 {
			first = it.Loss
		} else if it.Loss != first {
			return false
		}
		n++
	}
	return n >= 2
}

// loadLSAPayload reads a lsa model for index --lsa.
func loadLSAPayload(p string) (index.PayloadEncoder, error) {
	m, err := lsa.Load(p)
	if err != nil {
		return nil, err
	}
	return m.PayloadEncoder(""), nil
}

// loadS2NetPayload reads a s2net model for index --s2net.
func loadS2NetPayload(p string) (index.PayloadEncoder, error) {
	m, err := s2net.Load(p, nil)
	if err != nil {
		return nil, err
	}
	return m.PayloadEncoder(""), nil
}

// loadDSEPayload reads a dse model for index --dse.
func loadDSEPayload(p string) (index.PayloadEncoder, error) {
	m, err := dse.Load(p)
	if err != nil {
		return nil, err
	}
	return m.PayloadEncoder(""), nil
}
