package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/internal/conceptexp"
	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/dse"
	"github.com/semrank/semrank/models/lsa"
	"github.com/semrank/semrank/models/s2net"
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

// conceptTrainData reads the training lists (--data), the unlabelled texts
// and comparable pairs (--data and --corpus) and the dev lists (--dev);
// --data and --dev through ti (see trainIndex).
func conceptTrainData(ctx context.Context, ti *trainIndex, data, corpora []string, dev string) (concept.Data, []concept.Judged, error) {
	var d concept.Data
	for _, dir := range data {
		ds, err := ti.load(ctx, "--data", dir, true)
		if err != nil {
			return d, nil, err
		}
		lists, err := concept.JudgedLists(ds)
		if err != nil {
			return d, nil, err
		}
		d.Lists = append(d.Lists, lists...)
		d.AddCorpus(ds, false)
	}
	extra, err := conceptexp.LoadExtra(corpora)
	if err != nil {
		return d, nil, err
	}
	d.Texts = append(d.Texts, extra.Texts...)
	d.Pairs = append(d.Pairs, extra.Pairs...)
	var devLists []concept.Judged
	if dev != "" {
		ds, err := ti.load(ctx, "--dev", dev, true)
		if err != nil {
			return d, nil, err
		}
		if devLists, err = concept.JudgedLists(ds); err != nil {
			return d, nil, err
		}
	}
	return d, devLists, nil
}

// curveReporter returns a Progress that drives a progress bar (or prints
// lines off-terminal) and the curve it collects.
func curveReporter(method string, steps int) (concept.Progress, func()) {
	bar := newBar(steps, method)
	n := 0
	return func(it concept.Iteration) {
			n++
			desc := fmt.Sprintf("%s %s %d loss %.4f", method, it.Phase, it.Iter, it.Loss)
			if !math.IsNaN(it.DevMAP) {
				desc += fmt.Sprintf(" dev MAP %.4f", it.DevMAP)
			}
			bar.Describe(desc)
			_ = bar.Set(min(n, steps))
			if !isTerminal() {
				fmt.Fprintln(os.Stderr, desc)
			}
		}, func() {
			_ = bar.Finish()
		}
}

// errNoPreference says that no query of the directories dirs (flag's) has
// both a relevant and a not relevant candidate, and how to get such lists.
func errNoPreference(method, flag string, dirs []string) error {
	return fmt.Errorf("%s %s: no query has both a relevant and a not-relevant candidate, so %s has nothing to learn from or stop early on "+
		"(held-out MAP would be 1 whatever it learned); without %s a query's candidates are its judged documents alone: "+
		"write BM25 candidate lists, where documents not judged count as not relevant, with "+
		"semrank run --data DIR --index IDX --out DIR/%s",
		flag, strings.Join(dirs, " "), method, eval.CandidatesFile, eval.CandidatesFile)
}

func newTrainConceptCmd(method string) *cobra.Command {
	var data, corpora []string
	var dev, out, init, indexPath, pipelinePath string
	var dim, depth int
	var scfg s2net.Config
	var dcfg dse.Config
	var space concept.SpaceConfig
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
			ti, err := openTrainIndex(cmd.Context(), indexPath, pipelinePath, depth)
			if err != nil {
				return err
			}
			defer ti.close()
			d, devLists, err := conceptTrainData(cmd.Context(), ti, data, corpora, dev)
			if err != nil {
				return err
			}
			if method != "lsa" {
				// Lists whose candidates all share one grade give no
				// ranking to learn or to stop early on: held-out MAP
				// would be 1 whatever the model.
				if !slices.ContainsFunc(d.Lists, concept.Judged.HasPreference) {
					return errNoPreference(method, "--data", data)
				}
				if dev != "" && !slices.ContainsFunc(devLists, concept.Judged.HasPreference) {
					return errNoPreference(method, "--dev", []string{dev})
				}
			}
			var curve []concept.Iteration
			var save func(string) error
			var summary string
			switch method {
			case "lsa":
				texts := append([]string(nil), d.Texts...)
				m, err := lsa.Train(texts, lsa.Config{Dim: dim, Space: space})
				if err != nil {
					return err
				}
				if len(devLists) > 0 {
					summary = fmt.Sprintf("dev MAP %.4f", concept.MAP(devLists, concept.CosineScores(m, devLists)))
				}
				save = m.Save
			case "s2net":
				scfg.Dim, scfg.Init, scfg.Space = dim, init, space
				progress, done := curveReporter(method, scfg.MaxIter+1)
				m, c, err := s2net.Train(cmd.Context(), d, scfg, s2net.Options{Dev: devLists, Progress: progress})
				done()
				if err != nil {
					return err
				}
				curve, save = c, m.Save
			case "dse":
				if dim > 0 {
					dcfg.C = dim
				}
				progress, done := curveReporter(method, 4*dcfg.PretrainEpochs+dcfg.FineTuneEpochs+1)
				m, c, err := dse.Train(cmd.Context(), d, dcfg, dse.Options{Dev: devLists, Progress: progress})
				done()
				if err != nil {
					return err
				}
				curve, save = c, m.Save
				summary = fmt.Sprintf("TF-IDF mix λ=%g", m.Config.Mix)
				if stalled(c, "finetune") {
					fmt.Fprintln(cmd.ErrOrStderr(), "note: dse: the fine-tuning loss never changed: the network learned nothing from the triples (saturated units?); try another --lr, --d or --input")
				}
			}
			// lsa.Train takes no context: interrupted while it fits, the
			// command would go on to write over an earlier model and
			// report success.
			if err := cmd.Context().Err(); err != nil {
				return err
			}
			if err := save(out); err != nil {
				return err
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
	f := cmd.Flags()
	f.StringArrayVar(&data, "data", nil, "training BEIR directory with judged candidate lists (repeatable)")
	f.StringArrayVar(&corpora, "corpus", nil, "extra BEIR directory: unlabelled text and comparable pairs (repeatable)")
	f.StringVar(&dev, "dev", "", "dev BEIR directory for early stopping")
	f.StringVar(&out, "out", "", "model file to write")
	trainIndexFlags(cmd, &indexPath, &pipelinePath, &depth)
	switch method {
	case "lsa":
		f.IntVar(&dim, "dim", 100, "concept dimensions k")
		f.IntVar(&space.MaxTerms, "max-terms", 10000, "vocabulary size")
	case "s2net":
		f.IntVar(&dim, "dim", 100, "concept dimensions k")
		f.IntVar(&space.MaxTerms, "max-terms", 10000, "vocabulary size")
		f.StringVar(&init, "init", "lsa", "initial projection: lsa or random")
		f.Float64Var(&scfg.Gamma, "gamma", 10, "loss scale γ")
		f.IntVar(&scfg.MaxIter, "iter", 100, "L-BFGS iterations")
		f.IntVar(&scfg.Patience, "patience", 10, "stop after this many iterations without a better dev MAP")
		f.Float64Var(&scfg.PairWeight, "pair-weight", 1, "weight of the comparable-pair loss (<0: none)")
		f.IntVar(&scfg.MaxPairs, "max-pairs", 0, "use at most this many comparable pairs (0: all)")
		f.Uint64Var(&scfg.Seed, "seed", 1, "random seed")
	case "dse":
		f.IntVar(&dim, "dim", 50, "embedding dimensions C")
		f.IntVar(&dcfg.D, "d", 500, "input vocabulary: the top-D terms")
		f.StringVar((*string)(&dcfg.Input), "input", "binary", "input: binary or tfidf-l2")
		f.IntVar(&dcfg.PretrainEpochs, "pretrain-epochs", 5, "CD-1 epochs per RBM")
		f.IntVar(&dcfg.FineTuneEpochs, "epochs", 20, "fine-tuning epochs")
		f.Float64Var(&dcfg.FineTuneLR, "lr", 0.001, "fine-tuning learning rate")
		f.IntVar(&dcfg.Patience, "patience", 5, "stop after this many epochs without a better dev MAP")
		f.Float64Var(&dcfg.Mix, "mix", -1, "TF-IDF mixing weight λ (<0: choose on the dev lists)")
		f.Uint64Var(&dcfg.Seed, "seed", 1, "random seed")
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
