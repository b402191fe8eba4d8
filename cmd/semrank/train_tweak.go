package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/stages"
)

// trainTweakOptions are the flags of semrank train tweak.
type trainTweakOptions struct {
	stage                                                   stages.TweakOptions
	dataDir, devDir, indexPath, pipelinePath, alphaStr, out string
	noLog                                                   bool
	depth                                                   int
}

// newTrainTweakCmd returns semrank train tweak.
func newTrainTweakCmd() *cobra.Command {
	var o trainTweakOptions
	o.stage = stages.DefaultTweakOptions()
	cmd := &cobra.Command{
		Use:   "tweak --data DIR [--dev DIR] [--index PATH [--pipeline FILE]] [--loss preference|sse|log] [--alpha A|auto] --out MODEL",
		Short: "Train TWEAK learned term weights (Yih, 2009) from judged candidate lists",
		Long: `Train TWEAK: a term's weight is softplus(w·φ(term, text)) over nine features
(bias, log tf, log df, capitalised, first position, relative position, length,
in-title, query-log frequency), texts are compared by cosine, and w minimises
the chosen loss plus α/2·‖w‖² with L-BFGS.

Training pairs are DIR's queries and their candidates (candidates.trec),
labelled by qrels/test.tsv; a candidate of a judged query that it does not
judge counts as not relevant (grade 0), in --data and --dev. Document
frequencies come from --index when given, else from the corpora of --data and
--dev; they are stored in the model.
--index may be any Bleve index: a directory without corpus.jsonl then
learns from the index's documents, read through the fields of --pipeline,
and, without candidates.trec, from each query's first-stage top --depth
over the index, as a pipeline over that index reranks them; over an index
semrank did not build, document frequencies are counted in its documents.
--alpha auto chooses α from {0.003,…,1} by dev MAP, on --dev when given, else
on 20% of the training queries (then retrains on all of them).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrainTweak(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dataDir, "data", "", "training BEIR directory with qrels and candidates.trec")
	f.StringVar(&o.devDir, "dev", "", "dev BEIR directory (its metrics for the trained model, and the choice of --alpha auto)")
	trainIndexFlags(cmd, &o.indexPath, &o.pipelinePath, &o.depth)
	f.StringVar(&o.stage.Loss, "loss", string(tweak.LossPreference), "loss: preference, sse or log")
	f.StringVar(&o.alphaStr, "alpha", "auto", "L2 weight α, or auto")
	f.BoolVar(&o.noLog, "no-query-log", false, "do not use the training queries as a query log (qf feature)")
	f.IntVar(&o.stage.MaxIter, "max-iter", tweak.DefaultConfig().MaxIterations, "maximum L-BFGS iterations")
	f.StringVar(&o.out, "out", "", "model file to write")
	_ = cmd.MarkFlagRequired("data")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// runTrainTweak runs semrank train tweak.
func runTrainTweak(cmd *cobra.Command, o trainTweakOptions) error {
	if err := checkTrainTweakFlags(cmd, &o); err != nil {
		return err
	}
	ctx := cmd.Context()
	ti, err := openTrainIndex(ctx, o.indexPath, o.pipelinePath, o.depth)
	if err != nil {
		return err
	}
	defer ti.close()
	in := rerank.TrainInput{Log: cmd.OutOrStdout()}
	if in.Train, err = ti.load(ctx, "--data", o.dataDir, true); err != nil {
		return err
	}
	if o.devDir != "" {
		if in.Dev, err = ti.load(ctx, "--dev", o.devDir, true); err != nil {
			return err
		}
	}
	// A semrank index gives its own document frequencies; another
	// index's are counted in its documents, the corpus the
	// directories were read with.
	if si, ok := ti.semrank(); ok {
		in.Index = si
		o.stage.DF = "index"
	}
	spec, err := stageSpec(tweak.Method, o.stage)
	if err != nil {
		return err
	}
	// Counting document frequencies and analyzing every candidate
	// take a while on large collections, before the first
	// iteration's progress.
	fmt.Fprintf(cmd.ErrOrStderr(), "tweak: counting term statistics and building the training lists of %d queries\n", len(in.Train.Queries))
	var done func()
	in.Progress, done = stepBar("tweak")
	err = trainModel(ctx, spec, in, o.out)
	done()
	if err != nil {
		return err
	}
	m, err := tweak.Load(o.out)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "saved %s (model %s)\n", o.out, m.ID())
	return nil
}

// checkTrainTweakFlags refuses, before any work, flag values train tweak
// cannot use and an --out that would overwrite its inputs, and sets the
// stage options that flags give in another form (--alpha, --no-query-log).
func checkTrainTweakFlags(cmd *cobra.Command, o *trainTweakOptions) error {
	if err := checkPositive(cmd, "max-iter"); err != nil {
		return err
	}
	if err := checkOutputOf("--out", o.out, []string{o.dataDir, o.devDir}); err != nil {
		return err
	}
	if err := checkRetrainOutput(cmd.ErrOrStderr(), o.out); err != nil {
		return err
	}
	if err := checkTrainingDirs("--data", []string{o.dataDir}, "--dev", o.devDir); err != nil {
		return err
	}
	if _, err := tweak.ParseLoss(o.stage.Loss); err != nil {
		return err
	}
	if err := o.stage.Alpha.Set(o.alphaStr); err != nil {
		return fmt.Errorf("--alpha %q: want a non-negative number or auto", o.alphaStr)
	}
	o.stage.QueryLog = !o.noLog
	return nil
}

// loadTWEAKPayload reads a tweak model for index --tweak.
func loadTWEAKPayload(path string) (index.PayloadEncoder, error) {
	m, err := tweak.Load(path)
	if err != nil {
		return nil, err
	}
	return tweak.NewEncoder(m), nil
}
