package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/models/translation"
	"github.com/semrank/semrank/rerank/stages"
)

// trainTranslationOptions are the flags of semrank train translation.
type trainTranslationOptions struct {
	data, out string
	stage     stages.TranslationOptions
}

// newTrainTranslationCmd returns semrank train translation.
func newTrainTranslationCmd() *cobra.Command {
	var o trainTranslationOptions
	o.stage = stages.DefaultTranslationOptions()
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
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrainTranslation(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.data, "data", "", "BEIR directory with judged queries (and candidates.trec)")
	f.StringVar(&o.out, "out", "", "model file to write")
	f.IntVar(&o.stage.Iterations, "iterations", o.stage.Iterations, "EM iterations of IBM Model 1")
	f.IntVar(&o.stage.MinCount, "min-count", o.stage.MinCount, "drop words seen fewer times in the collection")
	f.Float64Var(&o.stage.Prune, "prune", o.stage.Prune, "drop translation probabilities below this")
	f.Float64Var(&o.stage.Lambda, "lambda", o.stage.Lambda, "weight of the collection model, in (0, 1)")
	f.Float64Var(&o.stage.Beta, "beta", o.stage.Beta, "weight of translation against word match, in [0, 1]")
	return cmd
}

// runTrainTranslation runs semrank train translation.
func runTrainTranslation(cmd *cobra.Command, o trainTranslationOptions) error {
	if err := checkTranslationFlags(cmd); err != nil {
		return err
	}
	spec, err := stageSpec(translation.Method, o.stage)
	if err != nil {
		return err
	}
	if err := trainStageTo(cmd.Context(), cmd.ErrOrStderr(), spec, o.data, o.out); err != nil {
		return err
	}
	m, err := translation.Load(o.out)
	if err != nil {
		return err
	}
	var entries int
	for _, r := range m.Rows {
		entries += len(r.P)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "translation: %d words, %d translation probabilities from %s; wrote %s\n", len(m.Vocab), entries, o.data, o.out)
	return nil
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
