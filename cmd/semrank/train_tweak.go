package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/stages"
)

func init() {
	addPayloadFlag("tweak", "TWEAK model: store every document's learned term-weight vector (payload \"tweak\")",
		func(path string) (index.PayloadEncoder, error) {
			m, err := tweak.Load(path)
			if err != nil {
				return nil, err
			}
			return tweak.NewEncoder(m), nil
		})

	o := stages.DefaultTweakOptions()
	var dataDir, devDir, indexPath, pipelinePath, alphaStr, out string
	var noLog bool
	var depth int
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPositive(cmd, "max-iter"); err != nil {
				return err
			}
			if err := checkOutputOf("--out", out, []string{dataDir, devDir}); err != nil {
				return err
			}
			if err := checkRetrainOutput(cmd.ErrOrStderr(), out); err != nil {
				return err
			}
			if err := checkTrainingDirs("--data", []string{dataDir}, "--dev", devDir); err != nil {
				return err
			}
			if _, err := tweak.ParseLoss(o.Loss); err != nil {
				return err
			}
			if err := o.Alpha.Set(alphaStr); err != nil {
				return fmt.Errorf("--alpha %q: want a non-negative number or auto", alphaStr)
			}
			o.QueryLog = !noLog
			ctx := cmd.Context()
			ti, err := openTrainIndex(ctx, indexPath, pipelinePath, depth)
			if err != nil {
				return err
			}
			defer ti.close()
			in := rerank.TrainInput{Log: cmd.OutOrStdout()}
			if in.Train, err = ti.load(ctx, "--data", dataDir, true); err != nil {
				return err
			}
			if devDir != "" {
				if in.Dev, err = ti.load(ctx, "--dev", devDir, true); err != nil {
					return err
				}
			}
			// A semrank index gives its own document frequencies; another
			// index's are counted in its documents, the corpus the
			// directories were read with.
			if si, ok := ti.semrank(); ok {
				in.Index = si
				o.DF = "index"
			}
			spec, err := stageSpec(tweak.Method, o)
			if err != nil {
				return err
			}
			// Counting document frequencies and analyzing every candidate
			// take a while on large collections, before the first
			// iteration's progress.
			fmt.Fprintf(cmd.ErrOrStderr(), "tweak: counting term statistics and building the training lists of %d queries\n", len(in.Train.Queries))
			var done func()
			in.Progress, done = stepBar("tweak")
			err = trainModel(ctx, spec, in, out)
			done()
			if err != nil {
				return err
			}
			m, err := tweak.Load(out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "saved %s (model %s)\n", out, m.ID())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data", "", "training BEIR directory with qrels and candidates.trec")
	f.StringVar(&devDir, "dev", "", "dev BEIR directory (its metrics for the trained model, and the choice of --alpha auto)")
	trainIndexFlags(cmd, &indexPath, &pipelinePath, &depth)
	f.StringVar(&o.Loss, "loss", string(tweak.LossPreference), "loss: preference, sse or log")
	f.StringVar(&alphaStr, "alpha", "auto", "L2 weight α, or auto")
	f.BoolVar(&noLog, "no-query-log", false, "do not use the training queries as a query log (qf feature)")
	f.IntVar(&o.MaxIter, "max-iter", tweak.DefaultConfig().MaxIterations, "maximum L-BFGS iterations")
	f.StringVar(&out, "out", "", "model file to write")
	_ = cmd.MarkFlagRequired("data")
	_ = cmd.MarkFlagRequired("out")
	trainCmd.AddCommand(cmd)
}
