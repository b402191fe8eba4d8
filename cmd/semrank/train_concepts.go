package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/dse"
	"github.com/semrank/semrank/models/lsa"
	"github.com/semrank/semrank/models/s2net"
	"github.com/semrank/semrank/rerank"
)

func init() {
	trainCmd.AddCommand(newTrainConceptCmd("lsa"), newTrainConceptCmd("s2net"), newTrainConceptCmd("dse"))
	addPayloadFlag("lsa", "LSA model: store every document's concept vector (payload \"lsa\")",
		func(p string) (index.PayloadEncoder, error) {
			m, err := lsa.Load(p)
			if err != nil {
				return nil, err
			}
			return m.PayloadEncoder(""), nil
		})
	addPayloadFlag("s2net", "S2Net model (TF-IDF inputs): store every document's concept vector (payload \"s2net\")",
		func(p string) (index.PayloadEncoder, error) {
			m, err := s2net.Load(p, nil)
			if err != nil {
				return nil, err
			}
			return m.PayloadEncoder(""), nil
		})
	addPayloadFlag("dse", "DSE model: store every document's embedding Φ(d) (payload \"dse\")",
		func(p string) (index.PayloadEncoder, error) {
			m, err := dse.Load(p)
			if err != nil {
				return nil, err
			}
			return m.PayloadEncoder(""), nil
		})
}

// errNoPreference says that no query of the directories dirs (flag's) has
// both a relevant and a not relevant candidate, and how to get such lists.
func errNoPreference(method, flag string, dirs []string) error {
	return fmt.Errorf("%s %s: no query has both a relevant and a not-relevant candidate, so %s has nothing to learn from or stop early on "+
		"(held-out MAP would be 1 whatever it learned); without %s a query's candidates are its judged documents alone: "+
		"write BM25 candidate lists, where documents not judged count as not relevant, with "+
		"semrank run --data DIR --index IDX --out DIR/%s",
		flag, strings.Join(dirs, " "), method, dataset.CandidatesFile, dataset.CandidatesFile)
}

func newTrainConceptCmd(method string) *cobra.Command {
	var data, corpora []string
	var dev, out, init, input, indexPath, pipelinePath string
	var dim, maxTerms, iter, patience, maxPairs, d, pretrain, epochs, depth int
	var gamma, pairWeight, lr, mix float64
	var seed uint64
	short := map[string]string{
		"lsa":   "Train LSA: truncated SVD of the TF-IDF term–document matrix",
		"s2net": "Train S2Net (Yih et al. 2011): a discriminative projection to concept vectors, by L-BFGS",
		"dse":   "Train DSE (Wu, Min & Bai): a deep RBM-pretrained network fine-tuned on ranking triples",
	}[method]
	cmd := &cobra.Command{
		Use:   method + " --data DIR [--data DIR ...] [--corpus DIR ...] [--dev DIR] [--index PATH [--pipeline FILE]] [--dim K] --out MODEL",
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
		}[method] + ` Store document vectors at index time with
"semrank index --` + method + ` MODEL".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPositive(cmd, "dim", "max-terms", "gamma", "iter", "patience", "d", "pretrain-epochs", "epochs", "lr"); err != nil {
				return err
			}
			if err := checkNonNegative(cmd, "max-pairs"); err != nil {
				return err
			}
			if err := checkOutputOf("--out", out, append(append([]string{dev}, data...), corpora...)); err != nil {
				return err
			}
			if err := checkRetrainOutput(cmd.ErrOrStderr(), out); err != nil {
				return err
			}
			if err := checkTrainingDirs("--data", data, "--dev", dev); err != nil {
				return err
			}
			ctx := cmd.Context()
			ti, err := openTrainIndex(ctx, indexPath, pipelinePath, depth)
			if err != nil {
				return err
			}
			defer ti.close()
			in := rerank.TrainInput{Seed: seed}
			if in.Train, err = ti.loadAll(ctx, "--data", data); err != nil {
				return err
			}
			for _, dir := range corpora {
				ds, err := dataset.Load(dir)
				if err != nil {
					return err
				}
				in.Corpora = append(in.Corpora, ds)
			}
			lists, err := concept.JudgedLists(in.Train)
			if err != nil {
				return err
			}
			var devLists []concept.Judged
			if dev != "" {
				if in.Dev, err = ti.load(ctx, "--dev", dev, true); err != nil {
					return err
				}
				if devLists, err = concept.JudgedLists(in.Dev); err != nil {
					return err
				}
			}
			if method != "lsa" {
				// Lists whose candidates all share one grade give no
				// ranking to learn or to stop early on: held-out MAP
				// would be 1 whatever the model.
				if !slices.ContainsFunc(lists, concept.Judged.HasPreference) {
					return errNoPreference(method, "--data", data)
				}
				if dev != "" && !slices.ContainsFunc(devLists, concept.Judged.HasPreference) {
					return errNoPreference(method, "--dev", []string{dev})
				}
			}
			opts := map[string]any{}
			switch method {
			case "lsa":
				opts["dim"], opts["max_terms"] = dim, maxTerms
			case "s2net":
				opts["dim"], opts["max_terms"], opts["init"], opts["gamma"] = dim, maxTerms, init, gamma
				opts["iter"], opts["patience"], opts["pair_weight"], opts["max_pairs"] = iter, patience, pairWeight, maxPairs
			case "dse":
				opts["c"], opts["d"], opts["input"], opts["pretrain_epochs"] = dim, d, input, pretrain
				opts["epochs"], opts["lr"], opts["patience"], opts["mix"] = epochs, lr, patience, mix
			}
			var curve []concept.Iteration
			bar, done := stepBar(method)
			in.Progress = func(s rerank.TrainStep) {
				curve = append(curve, concept.Iteration{Iter: s.Iter, Phase: s.Phase, Loss: s.Loss, DevMAP: s.DevMAP})
				bar(s)
			}
			err = trainModel(ctx, rerank.StageSpec{Type: method, Options: opts}, in, out)
			done()
			if err != nil {
				return err
			}
			var summary string
			switch method {
			case "lsa":
				if len(devLists) > 0 {
					m, err := lsa.Load(out)
					if err != nil {
						return err
					}
					summary = fmt.Sprintf("dev MAP %.4f", concept.MAP(devLists, concept.CosineScores(m, devLists)))
				}
			case "dse":
				m, err := dse.Load(out)
				if err != nil {
					return err
				}
				summary = fmt.Sprintf("TF-IDF mix λ=%g", m.Config.Mix)
				if stalled(curve, "finetune") {
					fmt.Fprintln(cmd.ErrOrStderr(), "note: dse: the fine-tuning loss never changed: the network learned nothing from the triples (saturated units?); try another --lr, --d or --input")
				}
			}
			fmt.Printf("%s: wrote %s", method, out)
			if len(curve) > 0 {
				plotPath := out + ".curve.png"
				if err := concept.PlotCurve(plotPath, method+" training", curve); err != nil {
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
		},
	}
	trainIndexFlags(cmd, &indexPath, &pipelinePath, &depth)
	f := cmd.Flags()
	f.StringArrayVar(&data, "data", nil, "training BEIR directory with judged candidate lists (repeatable)")
	f.StringArrayVar(&corpora, "corpus", nil, "extra BEIR directory: unlabelled text and comparable pairs (repeatable)")
	f.StringVar(&dev, "dev", "", "dev BEIR directory for early stopping")
	f.StringVar(&out, "out", "", "model file to write")
	switch method {
	case "lsa":
		f.IntVar(&dim, "dim", 100, "concept dimensions k")
		f.IntVar(&maxTerms, "max-terms", 10000, "vocabulary size")
	case "s2net":
		f.IntVar(&dim, "dim", 100, "concept dimensions k")
		f.IntVar(&maxTerms, "max-terms", 10000, "vocabulary size")
		f.StringVar(&init, "init", "lsa", "initial projection: lsa or random")
		f.Float64Var(&gamma, "gamma", 10, "loss scale γ")
		f.IntVar(&iter, "iter", 100, "L-BFGS iterations")
		f.IntVar(&patience, "patience", 10, "stop after this many iterations without a better dev MAP")
		f.Float64Var(&pairWeight, "pair-weight", 1, "weight of the comparable-pair loss (<0: none)")
		f.IntVar(&maxPairs, "max-pairs", 0, "use at most this many comparable pairs (0: all)")
		f.Uint64Var(&seed, "seed", 1, "random seed")
	case "dse":
		f.IntVar(&dim, "dim", 50, "embedding dimensions C")
		f.IntVar(&d, "d", 500, "input vocabulary: the top-D terms")
		f.StringVar(&input, "input", "binary", "input: binary or tfidf-l2")
		f.IntVar(&pretrain, "pretrain-epochs", 5, "CD-1 epochs per RBM")
		f.IntVar(&epochs, "epochs", 20, "fine-tuning epochs")
		f.Float64Var(&lr, "lr", 0.001, "fine-tuning learning rate")
		f.IntVar(&patience, "patience", 5, "stop after this many epochs without a better dev MAP")
		f.Float64Var(&mix, "mix", -1, "TF-IDF mixing weight λ (<0: choose on the dev lists)")
		f.Uint64Var(&seed, "seed", 1, "random seed")
	}
	_ = cmd.MarkFlagRequired("out")
	return cmd
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
