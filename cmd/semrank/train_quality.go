package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/quality"
	"github.com/semrank/semrank/rerank/stages"
)

// trainQualityOptions are the flags of semrank train quality.
type trainQualityOptions struct {
	stage     stages.QualityOptions
	data, out string
}

// newTrainQualityCmd returns semrank train quality.
func newTrainQualityCmd() *cobra.Command {
	var o trainQualityOptions
	o.stage = stages.DefaultQualityOptions()
	cmd := &cobra.Command{
		Use:   "quality --data DIR [--context LIST] [--l2 X] --out MODEL",
		Short: "Train the question-independent answer-quality model (logistic regression over a candidate's words)",
		Long: `Train the quality stage's model on the judged candidate lists of DIR: an
L2-regularised logistic regression over the word unigrams and bigrams and the
character 3- to 5-grams of each candidate, good when judged relevant. --context adds forum context features
computed from the candidates' metadata (` + stages.QualityContextAll + `).
Use it in a pipeline as

  - type: quality
    model: MODEL`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrainQuality(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.data, "data", "", "BEIR directory with judged queries (and candidates.trec)")
	f.StringVar(&o.out, "out", "", "model file to write")
	f.StringVar(&o.stage.Context, "context", o.stage.Context, "comma-separated forum context features (default none)")
	f.Float64Var(&o.stage.L2, "l2", o.stage.L2, "L2 penalty per training example")
	f.IntVar(&o.stage.MinCount, "min-count", o.stage.MinCount, "drop features seen in fewer training texts")
	f.BoolVar(&o.stage.Bigrams, "bigrams", o.stage.Bigrams, "add word bigrams")
	f.BoolVar(&o.stage.Chars, "chars", o.stage.Chars, "add character 3- to 5-grams")
	return cmd
}

// runTrainQuality runs semrank train quality.
func runTrainQuality(cmd *cobra.Command, o trainQualityOptions) error {
	if err := checkPositive(cmd, "l2"); err != nil {
		return err
	}
	spec, err := stageSpec(quality.Method, o.stage)
	if err != nil {
		return err
	}
	if err := trainStageTo(cmd.Context(), cmd.ErrOrStderr(), spec, o.data, o.out); err != nil {
		return err
	}
	m, err := quality.Load(o.out)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "quality: %d features from %s; wrote %s\n", len(m.Features), o.data, o.out)
	return nil
}

// loadQualityPayload reads a quality model for index --quality.
func loadQualityPayload(path string) (index.PayloadEncoder, error) {
	m, err := quality.Load(path)
	if err != nil {
		return nil, err
	}
	return quality.NewEncoder(m)
}
