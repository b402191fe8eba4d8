package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/semrank/semrank/cmd/semrank/internal/unsupexp"
	"github.com/semrank/semrank/models/embed"
)

// trainEmbedOptions are the flags of semrank train embed.
type trainEmbedOptions struct {
	data, texts, indexes []string
	pipelinePath         string
	out                  string
	cfg                  embed.Config
	initPath             string
	initFormat           string
}

// newTrainEmbedCmd returns semrank train embed.
func newTrainEmbedCmd() *cobra.Command {
	var o trainEmbedOptions
	cmd := &cobra.Command{
		Use:   "embed (--data DIR | --index PATH | --text FILE) ... --out VECTORS",
		Short: "Train word vectors (skip-gram, or counted: ppmi) for WMD and SSG",
		Long: `Trains word vectors on every query and document text of the given BEIR
directories (--data; queries.jsonl is read where
there is one, judgments and candidate lists never) and plain-text files
(--text, one document per line). For SemEval, give the subtask A and B
directories so that all question and comment text, the 2015 threads
included, is used. Stop words, URLs and tags are removed and the
--prune-top most frequent words are left out of the vocabulary. Writes an
"embed" model bundle.

--method sgns (the default) trains a skip-gram with negative sampling;
--method ppmi counts co-occurrences and takes the truncated SVD of their
positive PMI (Levy, Goldberg & Dagan, 2015), which reads --dim, --window,
--min-count, --prune-top and --seed only.

--vectors FILE fine-tunes pre-trained vectors in domain (word2vec text or
binary, GloVe text, or a bundle; scripts/wink_glove.py writes a public
GloVe-derived set): the vocabulary is still the given text's, and each of its
words that FILE has starts from FILE's vector instead of a random one, so
words the collection uses too rarely to learn alone keep what general text
taught them. The dimension is FILE's. (--init and --init-format are the
earlier names of --vectors and --vectors-format.)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrainEmbed(cmd, o) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.data, "data", nil, "BEIR directory whose corpus and queries (if it has queries.jsonl) are training text (repeatable)")
	f.StringArrayVar(&o.indexes, "index", nil, "index (any Bleve index; one semrank did not build reads the fields --pipeline names) whose documents are training text (repeatable)")
	f.StringVar(&o.pipelinePath, "pipeline", "", "with --index: pipeline file whose fields: key names the fields holding an index's text")
	f.StringArrayVar(&o.texts, "text", nil, "plain-text file, one document per line (repeatable)")
	f.StringVar(&o.out, "out", "", "output model bundle")
	f.StringVar(&o.initPath, "vectors", "", "pre-trained word vectors to fine-tune (GloVe or word2vec text, word2vec binary, or a bundle)")
	f.StringVar(&o.initFormat, "vectors-format", "auto", "format of --vectors: auto, semrank, word2vec, word2vec-bin, glove")
	// The flags' earlier names, kept so that scripts using them work.
	f.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		switch name {
		case "init":
			name = "vectors"
		case "init-format":
			name = "vectors-format"
		}
		return pflag.NormalizedName(name)
	})
	def := embed.DefaultConfig() // the defaults recipes train with too
	f.StringVar(&o.cfg.Method, "method", embed.MethodSGNS, "trainer: sgns (skip-gram, negative sampling) or ppmi (SVD of positive PMI counts)")
	f.IntVar(&o.cfg.Dim, "dim", def.Dim, "vector dimension")
	f.IntVar(&o.cfg.Window, "window", def.Window, "context window")
	f.IntVar(&o.cfg.Negative, "negative", def.Negative, "negative samples per context")
	f.IntVar(&o.cfg.Epochs, "epochs", def.Epochs, "passes over the text")
	f.IntVar(&o.cfg.MinCount, "min-count", def.MinCount, "minimum word count")
	f.IntVar(&o.cfg.PruneTop, "prune-top", def.PruneTop, "leave out the N most frequent words (0 or -1: none)")
	f.Float64Var(&o.cfg.Sample, "sample", def.Sample, "sub-sampling threshold (0: none)")
	f.Int64Var(&o.cfg.Seed, "seed", def.Seed, "random seed")
	return cmd
}

// runTrainEmbed runs semrank train embed.
func runTrainEmbed(cmd *cobra.Command, o trainEmbedOptions) error {
	if err := checkTrainEmbedFlags(cmd, &o); err != nil {
		return err
	}
	corpus, err := trainingTexts(cmd.Context(), o.data, o.indexes, o.pipelinePath, o.texts)
	if err != nil {
		return err
	}
	if o.initPath != "" {
		v, err := embed.LoadFile(o.initPath, embed.Format(o.initFormat))
		if err != nil {
			return err
		}
		if cmd.Flags().Changed("dim") && o.cfg.Dim != v.Dim {
			return fmt.Errorf("--dim %d, but the --vectors have %d dimensions", o.cfg.Dim, v.Dim)
		}
		o.cfg.Init = v
		o.cfg.Dim = v.Dim
	}
	start := time.Now()
	sents := embed.Sentences(corpus)
	var tokens int
	for _, s := range sents {
		tokens += len(s)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "embed: %d distinct texts, %d tokens\n", len(sents), tokens)
	steps, what := o.cfg.Epochs, "embed epochs"
	if o.cfg.Method == embed.MethodPPMI {
		steps, what = 1, "embed counts and SVD"
	}
	bar := newBar(steps, what)
	v, err := embed.TrainWithProgress(cmd.Context(), sents, o.cfg, func(epoch, _ int) { bar.Set(epoch) })
	bar.Finish()
	if err != nil {
		return err
	}
	if err := v.Save(o.out, o.cfg); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d words × %d dimensions (%.1fs)\n", o.out, v.Len(), v.Dim, time.Since(start).Seconds())
	return nil
}

// checkTrainEmbedFlags refuses, before any work, flag values train embed
// cannot use and an --out that would overwrite its inputs, and sets the
// configuration's values for the flags' "none" (0).
func checkTrainEmbedFlags(cmd *cobra.Command, o *trainEmbedOptions) error {
	if len(o.data)+len(o.texts)+len(o.indexes) == 0 || o.out == "" {
		return fmt.Errorf("give at least one --data DIR, --index PATH or --text FILE, and --out")
	}
	if err := checkOutputOf("--out", o.out, o.data, append(o.texts, o.initPath)...); err != nil {
		return err
	}
	if err := checkRetrainOutput(cmd.ErrOrStderr(), o.out); err != nil {
		return err
	}
	if o.initPath == "" {
		if err := checkUnused(cmd, "applies to --vectors only", "vectors-format"); err != nil {
			return err
		}
	}
	switch o.cfg.Method {
	case embed.MethodSGNS:
	case embed.MethodPPMI:
		if err := checkUnused(cmd, "applies to --method sgns only", "negative", "epochs", "sample", "vectors"); err != nil {
			return err
		}
	default:
		return fmt.Errorf("--method %q: want %s or %s", o.cfg.Method, embed.MethodSGNS, embed.MethodPPMI)
	}
	// The trainer reads a zero size as its default, so --epochs 0
	// would silently train 5 epochs.
	if err := checkPositive(cmd, "dim", "window", "negative", "epochs", "min-count"); err != nil {
		return err
	}
	// 0 turns sub-sampling off, as in word2vec; to the model, 0
	// means its default, and a negative value none.
	if err := checkNonNegative(cmd, "sample"); err != nil {
		return err
	}
	if o.cfg.Sample == 0 {
		o.cfg.Sample = -1
	}
	if o.cfg.PruneTop == 0 {
		o.cfg.PruneTop = -1 // leave out no word (0 would be read as the default, 30)
	}
	return nil
}

// trainingTexts returns the texts word vectors and topics learn from: the
// data directories' and the indexes' (unsupexp.CollectionTexts, an index
// semrank did not build read through the fields of the pipeline file at
// pipelinePath), then every line of the text files.
func trainingTexts(ctx context.Context, data, indexes []string, pipelinePath string, texts []string) ([]string, error) {
	fields, err := pipelineFields(pipelinePath)
	if err != nil {
		return nil, err
	}
	corpus, err := unsupexp.CollectionTexts(ctx, data, indexes, fields)
	if err != nil {
		return nil, err
	}
	for _, path := range texts {
		lines, err := embedTextLines(path)
		if err != nil {
			return nil, err
		}
		corpus = append(corpus, lines...)
	}
	return corpus, nil
}

func embedTextLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
