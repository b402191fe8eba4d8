package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/quality"
	"github.com/semrank/semrank/rerank/stages"
)

func init() {
	addPayloadFlag("quality", "answer quality model (without context features): store every document's score (payload \"quality\")",
		func(path string) (index.PayloadEncoder, error) {
			m, err := quality.Load(path)
			if err != nil {
				return nil, err
			}
			return quality.NewEncoder(m)
		})

	o := stages.DefaultQualityOptions()
	var data, out string
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPositive(cmd, "l2"); err != nil {
				return err
			}
			spec, err := stageSpec(quality.Method, o)
			if err != nil {
				return err
			}
			if err := trainStageTo(cmd.Context(), cmd.ErrOrStderr(), spec, data, out); err != nil {
				return err
			}
			m, err := quality.Load(out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "quality: %d features from %s; wrote %s\n", len(m.Features), data, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "BEIR directory with judged queries (and candidates.trec)")
	f.StringVar(&out, "out", "", "model file to write")
	f.StringVar(&o.Context, "context", o.Context, "comma-separated forum context features (default none)")
	f.Float64Var(&o.L2, "l2", o.L2, "L2 penalty per training example")
	f.IntVar(&o.MinCount, "min-count", o.MinCount, "drop features seen in fewer training texts")
	f.BoolVar(&o.Bigrams, "bigrams", o.Bigrams, "add word bigrams")
	f.BoolVar(&o.Chars, "chars", o.Chars, "add character 3- to 5-grams")
	trainCmd.AddCommand(cmd)
}
