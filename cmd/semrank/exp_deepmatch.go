package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/cmd/semrank/internal/deepmatchexp"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/deepmatch"
)

func newDeepMatchExperimentCmd() *cobra.Command {
	var train, cv []string
	var test, methods string
	var folds int
	var epochs int
	var seed uint64
	cmd := &cobra.Command{
		Use:   "deepmatch (--train DIR [--train DIR2 ...] --test DIR | --cv DIR [--cv DIR2 ...])",
		Short: "Compare DeepMatch with the bilinear and Siamese baselines, TF-IDF cosine and the IR order",
		Long: `Trains DeepMatch, the low-rank bilinear model and the Siamese network
(each with its default settings, early stopping on a tenth of its training
queries) and reranks the test queries' candidates with each, against TF-IDF
cosine and the first-stage order; also each system fused with the first
stage (z-score sum). With --cv the queries of the given directories are
cross-validated (--folds). Prints markdown tables: map@10 (SemEval MAP),
MRR, nDCG@1 with paired tests, then the paper's protocol (one relevant
candidate and five random ones, nDCG@1 and nDCG@6).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSplit(len(cv) > 0, len(train) > 0, test != ""); err != nil {
				return err
			}
			if err := checkHeldOut("--test", test, "--train", train...); err != nil {
				return err
			}
			if epochs < 0 {
				return fmt.Errorf("--epochs %d: want 0 (each method's default) or more", epochs)
			}
			if len(cv) == 0 {
				if err := checkUnused(cmd, "applies to --cv only", "folds"); err != nil {
					return err
				}
			} else if err := checkFolds(folds); err != nil {
				return err
			}
			cfg := deepmatchexp.Config{Log: os.Stderr, Seed: seed}
			for _, m := range strings.Split(methods, ",") {
				c := deepmatch.DefaultConfig(strings.TrimSpace(m))
				if epochs > 0 {
					c.Epochs = epochs
				}
				if err := c.Validate(); err != nil {
					return err
				}
				cfg.Methods = append(cfg.Methods, c)
			}
			var o *deepmatchexp.Outcome
			if len(cv) > 0 {
				qs, err := loadQueries(cv)
				if err != nil {
					return err
				}
				if o, err = deepmatchexp.CrossValidate(cmd.Context(), qs, folds, cfg); err != nil {
					return err
				}
			} else {
				tr, err := loadQueries(train)
				if err != nil {
					return err
				}
				te, err := loadQueries([]string{test})
				if err != nil {
					return err
				}
				if o, err = deepmatchexp.RunSplit(cmd.Context(), tr, te, deepmatchexp.Texts(te), cfg); err != nil {
					return err
				}
			}
			o.AddFused()
			for _, c := range cfg.Methods {
				fmt.Printf("%s: %s\n", c.Method, o.Weights(c.Method))
			}
			fmt.Println()
			return o.Report(os.Stdout)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&train, "train", nil, "training BEIR directory (repeatable)")
	f.StringVar(&test, "test", "", "test BEIR directory")
	f.StringArrayVar(&cv, "cv", nil, "cross-validate over the queries of these directories (repeatable)")
	f.IntVar(&folds, "folds", 5, "cross-validation folds")
	f.StringVar(&methods, "methods", "deepmatch,bilinear,siamese", "learned systems to compare")
	f.IntVar(&epochs, "epochs", 0, "maximum epochs for every method (0: each method's default)")
	f.Uint64Var(&seed, "seed", 1, "seed of the random pools")
	return cmd
}

// loadQueries reads judged queries with candidates from BEIR directories.
func loadQueries(dirs []string) ([]deepmatch.Query, error) {
	var out []deepmatch.Query
	for _, d := range dirs {
		ds, err := dataset.Load(d)
		if err != nil {
			return nil, err
		}
		qs, err := deepmatch.FromDataset(ds)
		if err != nil {
			return nil, err
		}
		out = append(out, qs...)
	}
	return out, nil
}
