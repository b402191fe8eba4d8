package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/cmd/semrank/internal/conceptexp"
	"github.com/semrank/semrank/models/concept"
)

func newConceptsExperimentCmd() *cobra.Command {
	var cfg conceptexp.Config
	var trainDir, testDir, cvDir, out, ks, cs string
	var corpora []string
	var folds int
	var noPairs, withTweak bool
	cmd := &cobra.Command{
		Use:   "concepts (--train DIR --test DIR | --cv DIR) [--corpus DIR ...]",
		Short: "Compare LSA, S2Net and DSE with TF-IDF cosine and the first stage, alone and fused",
		Long: `Trains LSA, S2Net (one model per --ks value) and DSE (one per --cs value) and
scores the test queries' candidates with each, alone and fused with the
first-stage score (z-score sum), against TF-IDF cosine and the first-stage
order. With --train/--test the models learn from the training directory's
judged lists; with --cv they are cross-validated over the directory's
queries (--folds). --corpus directories add unlabelled text (vocabulary,
LSA, DSE pretraining) and comparable pairs (title–body, query–relevant
document). Prints a markdown table (MAP = map@10, MRR, AUC, paired tests).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Ks, err = parseInts(ks); err != nil {
				return fmt.Errorf("--ks: %w", err)
			}
			if cfg.Cs, err = parseInts(cs); err != nil {
				return fmt.Errorf("--cs: %w", err)
			}
			for _, f := range []struct {
				name string
				vals []int
			}{{"ks", cfg.Ks}, {"cs", cfg.Cs}} {
				seen := map[int]bool{}
				for _, v := range f.vals {
					if v < 1 {
						return fmt.Errorf("--%s %d: want positive dimensions", f.name, v)
					}
					// Both would report under one name, trained twice.
					if seen[v] {
						return fmt.Errorf("--%s %s: %d given twice", f.name, cmd.Flag(f.name).Value, v)
					}
					seen[v] = true
				}
			}
			// The trainers check these only once the vocabulary, LSA and
			// DSE pretraining are done, minutes in.
			if init := cfg.S2Net.Init; init != "lsa" && init != "random" {
				return fmt.Errorf("--init %q: want lsa or random", init)
			}
			if in := cfg.DSE.Input; in != concept.Binary && in != concept.TFIDFNorm {
				return fmt.Errorf("--dse-input %q: want %s or %s", in, concept.Binary, concept.TFIDFNorm)
			}
			if err := checkSplit(cvDir != "", trainDir != "", testDir != ""); err != nil {
				return err
			}
			// The trainers read a zero (or, for some, negative) size as
			// the default: --s2net-iter 0 would run 100 iterations and
			// --dse-epochs -1 none.
			if err := checkPositive(cmd, "max-terms", "s2net-iter", "dse-d", "dse-epochs", "dse-lr"); err != nil {
				return err
			}
			if err := checkNonNegative(cmd, "max-pairs", "dse-max-triples"); err != nil {
				return err
			}
			if err := checkHeldOut("--test", testDir, "--train", trainDir); err != nil {
				return err
			}
			if out != "" {
				if err := checkOutputOf("--out", out, append([]string{trainDir, testDir, cvDir}, corpora...)); err != nil {
					return err
				}
			}
			if cvDir == "" {
				if err := checkUnused(cmd, "applies to --cv only", "folds"); err != nil {
					return err
				}
			} else {
				if err := checkFolds(folds); err != nil {
					return err
				}
				if len(corpora) == 0 {
					return fmt.Errorf("--cv needs a --corpus DIR: cross-validation fits the vocabulary, LSA and DSE pretraining on the extra corpus only")
				}
			}
			cfg.Log = os.Stderr
			extra, err := conceptexp.LoadExtra(corpora)
			if err != nil {
				return err
			}
			if noPairs {
				extra.Pairs = nil
				cfg.S2Net.PairWeight = -1
				cfg.DSE.PairNegatives = -1
			}
			ctx := cmd.Context()
			var lists []concept.Judged
			var scores conceptexp.Scores
			var names []string
			if cvDir != "" {
				all, ds, err := conceptexp.LoadLists(cvDir)
				if err != nil {
					return err
				}
				// Before the unsupervised fits, which take minutes.
				if folds > len(all) {
					return fmt.Errorf("--folds %d: %s has only %d judged queries", folds, cvDir, len(all))
				}
				if withTweak {
					cfg.TWEAK = conceptexp.TweakTrainer(ds, extra.Texts)
				}
				fx, err := conceptexp.Prepare(ctx, extra, cfg)
				if err != nil {
					return err
				}
				if lists, scores, names, err = conceptexp.CrossValidate(ctx, fx, extra, all, folds, cfg); err != nil {
					return err
				}
			} else {
				train, ds, err := conceptexp.LoadLists(trainDir)
				if err != nil {
					return err
				}
				if withTweak {
					cfg.TWEAK = conceptexp.TweakTrainer(ds, append(conceptexp.Texts(train), extra.Texts...))
				}
				if lists, _, err = conceptexp.LoadLists(testDir); err != nil {
					return err
				}
				fx, err := conceptexp.Prepare(ctx, concept.Data{Texts: extra.Texts, Lists: train}, cfg)
				if err != nil {
					return err
				}
				if scores, names, err = conceptexp.RunSplit(ctx, fx, extra, train, lists, cfg); err != nil {
					return err
				}
			}
			names = conceptexp.AddFused(scores, names)
			var buf bytes.Buffer
			fmt.Fprintf(&buf, "`semrank %s`\n\n", strings.Join(os.Args[1:], " "))
			if err := conceptexp.Report(&buf, lists, scores, names); err != nil {
				return err
			}
			os.Stdout.Write(buf.Bytes())
			if out != "" {
				return writeReport(out, buf.Bytes())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&trainDir, "train", "", "training BEIR directory (judged candidate lists)")
	f.StringVar(&testDir, "test", "", "test BEIR directory")
	f.StringVar(&cvDir, "cv", "", "BEIR directory to cross-validate over")
	f.IntVar(&folds, "folds", 5, "cross-validation folds")
	f.StringArrayVar(&corpora, "corpus", nil, "extra BEIR directory for unlabelled text and comparable pairs (repeatable)")
	f.BoolVar(&withTweak, "tweak", false, "also train TWEAK on the training queries: TWEAK cosine, and S2Net on TWEAK weights")
	f.BoolVar(&noPairs, "no-pairs", false, "do not train on comparable pairs")
	f.StringVar(&ks, "ks", "50,100,200", "LSA/S2Net dimensions")
	f.StringVar(&cs, "cs", "10,50,100", "DSE embedding dimensions")
	f.IntVar(&cfg.Space.MaxTerms, "max-terms", 10000, "vocabulary size for LSA, S2Net and TF-IDF")
	f.IntVar(&cfg.S2Net.MaxIter, "s2net-iter", 100, "S2Net L-BFGS iterations")
	f.IntVar(&cfg.S2Net.MaxPairs, "max-pairs", 0, "use at most this many comparable pairs in S2Net (0: all)")
	f.StringVar((*string)(&cfg.S2Net.Init), "init", "lsa", "S2Net initialisation: lsa or random")
	f.IntVar(&cfg.DSE.D, "dse-d", 500, "DSE input vocabulary (top-D terms)")
	f.StringVar((*string)(&cfg.DSE.Input), "dse-input", "binary", "DSE input: binary or tfidf-l2")
	f.IntVar(&cfg.DSE.FineTuneEpochs, "dse-epochs", 20, "DSE fine-tuning epochs")
	f.Float64Var(&cfg.DSE.FineTuneLR, "dse-lr", 0.001, "DSE fine-tuning learning rate")
	f.IntVar(&cfg.DSE.MaxTriples, "dse-max-triples", 0, "DSE triples per epoch (0: all)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "random seed (folds, held-out split, initialisation)")
	f.StringVar(&out, "out", "", "also write the markdown table here")
	return cmd
}
