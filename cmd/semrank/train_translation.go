package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/models/translation"
	"github.com/semrank/semrank/rerank/stages"
)

func init() {
	var data, out string
	o := stages.DefaultTranslationOptions()
	cmd := &cobra.Command{
		Use:   "translation --data DIR --out MODEL [--lambda X] [--beta X] [--iterations N]",
		Short: "Train the question–answer translation model (IBM Model 1 translation language model)",
		Long: `Train the translation stage's model on the judged candidate lists of DIR: each
query with each of its relevant candidates is a question–answer pair, from which
IBM Model 1 learns which answer words follow which question words; every query
and candidate text gives the collection model. The stage scores a candidate by
the likelihood of the query's words under the candidate's translation language
model (Xue, Jeon and Croft, SIGIR 2008). Use it in a pipeline as

  - type: translation
    model: MODEL`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkTranslationFlags(cmd); err != nil {
				return err
			}
			spec, err := stageSpec(translation.Method, o)
			if err != nil {
				return err
			}
			if err := trainStageTo(cmd.Context(), cmd.ErrOrStderr(), spec, data, out); err != nil {
				return err
			}
			m, err := translation.Load(out)
			if err != nil {
				return err
			}
			var entries int
			for _, r := range m.Rows {
				entries += len(r.P)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "translation: %d words, %d translation probabilities from %s; wrote %s\n", len(m.Vocab), entries, data, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "BEIR directory with judged queries (and candidates.trec)")
	f.StringVar(&out, "out", "", "model file to write")
	f.IntVar(&o.Iterations, "iterations", o.Iterations, "EM iterations of IBM Model 1")
	f.IntVar(&o.MinCount, "min-count", o.MinCount, "drop words seen fewer times in the collection")
	f.Float64Var(&o.Prune, "prune", o.Prune, "drop translation probabilities below this")
	f.Float64Var(&o.Lambda, "lambda", o.Lambda, "weight of the collection model, in (0, 1)")
	f.Float64Var(&o.Beta, "beta", o.Beta, "weight of translation against word match, in [0, 1]")
	trainCmd.AddCommand(cmd)
}

// checkTranslationFlags refuses, before any work, a value of train
// translation's numeric flags outside the range translation.Config allows:
// the trainer would refuse it only after loading the data, naming the
// option (min_count) rather than the flag.
func checkTranslationFlags(cmd *cobra.Command) error {
	if err := checkPositive(cmd, "iterations", "min-count"); err != nil {
		return err
	}
	for _, r := range []struct {
		flag string
		ok   func(float64) bool
		want string
	}{
		{"prune", func(v float64) bool { return v >= 0 && v < 1 }, "a number in [0, 1)"},
		{"lambda", func(v float64) bool { return v > 0 && v < 1 }, "a number in (0, 1)"},
		{"beta", func(v float64) bool { return v >= 0 && v <= 1 }, "a number in [0, 1]"},
	} {
		if err := checkFlags(cmd, []string{r.flag}, r.ok, r.want); err != nil {
			return err
		}
	}
	return nil
}
