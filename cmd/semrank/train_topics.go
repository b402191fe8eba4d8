package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/models/topics"
)

// trainTopicsOptions are the flags of semrank train topics.
type trainTopicsOptions struct {
	data, indexes, texts []string
	pipelinePath         string
	out                  string
	cfg                  topics.Config
}

// newTrainTopicsCmd returns semrank train topics.
func newTrainTopicsCmd() *cobra.Command {
	var o trainTopicsOptions
	cmd := &cobra.Command{
		Use:   "topics (--index PATH | --data DIR | --text FILE) ... --topics K --out MODEL",
		Short: "Train the thresholded-SVD topic model (Bansal et al. 2014) for SSG soft seeds",
		Long: `Fits the thresholded-SVD topic model to every document of the given
indexes, every query and document text of the given BEIR directories and
every line of the plain-text files (each distinct text once), tokenized as the
word-vector models see it, and writes a "topics" model bundle. The SSG
reranker takes its soft seeds and feature IDF weights from it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrainTopics(cmd, o) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.indexes, "index", nil, "index (any Bleve index; one semrank did not build reads the fields --pipeline names) whose documents form the collection (repeatable)")
	f.StringVar(&o.pipelinePath, "pipeline", "", "with --index: pipeline file whose fields: key names the fields holding an index's text")
	f.StringArrayVar(&o.data, "data", nil, "BEIR directory whose corpus and queries (if it has queries.jsonl) form the collection (repeatable)")
	f.StringArrayVar(&o.texts, "text", nil, "plain-text file, one document per line (repeatable)")
	f.StringVar(&o.out, "out", "", "output model bundle")
	f.IntVar(&o.cfg.K, "topics", topics.DefaultK, "number of topics k")
	f.Float64Var(&o.cfg.Gamma, "gamma", 1.1, "catchword margin over every other topic")
	f.Uint64Var(&o.cfg.Seed, "seed", 1, "random seed")
	return cmd
}

// runTrainTopics runs semrank train topics.
func runTrainTopics(cmd *cobra.Command, o trainTopicsOptions) error {
	if len(o.data)+len(o.indexes)+len(o.texts) == 0 || o.out == "" {
		return fmt.Errorf("give at least one --index PATH, --data DIR or --text FILE, and --out")
	}
	// The model reads a zero gamma as its default (1.1), and one
	// below 1 makes a word a catchword of topics where it is less
	// frequent than in another; the ssg stage's topics_gamma
	// refuses those too.
	if err := checkPositive(cmd, "gamma"); err != nil {
		return err
	}
	if o.cfg.Gamma < 1 {
		return fmt.Errorf("--gamma %g: want at least 1 (a catchword's margin over every other topic)", o.cfg.Gamma)
	}
	if err := checkOutputOf("--out", o.out, o.data, o.texts...); err != nil {
		return err
	}
	if err := checkRetrainOutput(cmd.ErrOrStderr(), o.out); err != nil {
		return err
	}
	corpus, err := trainingTexts(cmd.Context(), o.data, o.indexes, o.pipelinePath, o.texts)
	if err != nil {
		return err
	}
	start := time.Now()
	m, err := topics.Train(cmd.Context(), embed.Sentences(corpus), o.cfg)
	if err != nil {
		return err
	}
	if err := m.Save(o.out); err != nil {
		return err
	}
	nc := 0
	for _, J := range m.Catch {
		nc += len(J)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d topics over %d documents, %d words, %d catchwords (%.1fs)\n",
		o.out, o.cfg.K, m.Docs, len(m.Vocab), nc, time.Since(start).Seconds())
	return nil
}
