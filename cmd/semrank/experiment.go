package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/index/convert"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/recipe"
)

// newExperimentCmd returns semrank experiment, which groups the
// reproducible recipes and the papers' experiments.
func newExperimentCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "experiment",
		Short: "Reproducible experiment recipes (semeval2016, beir) and the papers' experiments",
	}
	cmd.AddCommand(newExperimentSemEvalCmd(), newExperimentBEIRCmd())
	for _, newCmd := range paperExperiments {
		cmd.AddCommand(newCmd())
	}
	return cmd
}

// paperExperiments builds the experiments behind each paper's section of
// docs/RESULTS.md, listed under "semrank experiment".
var paperExperiments = []func() *cobra.Command{
	newTweakExperimentCmd,
	newConceptsExperimentCmd,
	newDeepMatchExperimentCmd,
	newUnsupExperimentCmd,
	newWMDSpeedExperimentCmd,
}

// oldExperimentCmds returns the paper experiments under their earlier
// top-level names ("experiment-tweak"), hidden and deprecated, so that
// scripts written for those keep working.
func oldExperimentCmds() []*cobra.Command {
	var cmds []*cobra.Command
	for _, newCmd := range paperExperiments {
		old := newCmd()
		name := old.Name()
		old.Use = "experiment-" + old.Use
		old.Hidden = true
		old.Deprecated = "use \"semrank experiment " + name + "\""
		cmds = append(cmds, old)
	}
	return cmds
}

// experimentSemEvalOptions are the flags of semrank experiment semeval2016.
type experimentSemEvalOptions struct {
	opts    recipe.SemEvalOptions
	subtask string
}

// newExperimentSemEvalCmd returns semrank experiment semeval2016.
func newExperimentSemEvalCmd() *cobra.Command {
	var o experimentSemEvalOptions
	cmd := &cobra.Command{
		Use:   "semeval2016 --subtask A|B --train XML [--train XML ...] --dev XML --out DIR",
		Short: "Train the best SemEval-2016 Task 3 pipeline and report dev metrics",
		Long: `Convert the XML files, train every stage and the fusion (with cross-fitting
over the training queries) and print dev metrics for each stage alone and the
fused pipeline against the IR order. Then train the recipe again on the training
and dev files together and write that pipeline, with its models, to
DIR/pipeline.yaml (the training-only pipeline behind the dev metrics is
DIR/train/pipeline.yaml; --train-only skips the second training and writes it
to DIR/pipeline.yaml). While it runs, DIR is locked: a second recipe on DIR
fails at once. A split it has never seen is then scored with:

  semrank convert semeval2016 --xml TEST.xml --subtask B --out T
  semrank rerank --data T --pipeline DIR/pipeline.yaml --out run.trec
  semrank export semeval2016 --run run.trec --data T --out run.pred   # for the official scorer`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runExperimentSemEval(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.subtask, "subtask", "B", "A (question→comments) or B (question→questions)")
	f.StringArrayVar(&o.opts.Train, "train", nil, "training XML (repeatable)")
	f.StringVar(&o.opts.Dev, "dev", "", "dev XML (the reported metrics; then trained on with the training files); without it no dev metrics are reported")
	f.StringVar(&o.opts.Out, "out", "", "output directory (pipeline.yaml, models/, train/, data/, dev.trec)")
	f.StringVar(&o.opts.Fusion, "fusion", "", "linear or lambdamart (default: the recipe's choice)")
	f.IntVar(&o.opts.Folds, "folds", 5, "cross-fitting folds")
	f.StringSliceVar(&o.opts.Stages, "stages", nil, "stage types instead of the recipe's, for ablations (e.g. tweak or lexical,meta; TYPE:KEY=VALUE sets an option, as in s2net:dim=100)")
	f.Float64Var(&o.opts.FusionL2, "fusion-l2", 0, "L2 penalty of the linear fusion (0: the recipe's default)")
	f.BoolVar(&o.opts.TrainOnly, "train-only", false, "write the pipeline trained on the training files only (no second training on train+dev)")
	_ = cmd.MarkFlagRequired("train")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// runExperimentSemEval runs semrank experiment semeval2016.
func runExperimentSemEval(cmd *cobra.Command, o experimentSemEvalOptions) error {
	st, err := convert.ParseSubtask(o.subtask)
	if err != nil {
		return err
	}
	if err := checkFolds(o.opts.Folds); err != nil {
		return err
	}
	// The recipe checks it only after training the stages.
	if err := checkNonNegative(cmd, "fusion-l2"); err != nil {
		return err
	}
	if err := checkFusionL2(cmd, o.opts.Fusion); err != nil {
		return err
	}
	for _, t := range o.opts.Train {
		if o.opts.Dev != "" && sameFile(t, o.opts.Dev) {
			return fmt.Errorf("--dev %s is also a --train file: the dev metrics would be measured on training queries", o.opts.Dev)
		}
	}
	o.opts.Subtask = st
	o.opts.Log = cmd.OutOrStdout()
	return recipe.SemEval(cmd.Context(), o.opts)
}

// experimentBEIROptions are the flags of semrank experiment beir.
type experimentBEIROptions struct {
	opts         recipe.BEIROptions
	beirPipeline string
	pseudo       []string
	feedback     string
	afterFusion  string
}

// newExperimentBEIRCmd returns semrank experiment beir.
func newExperimentBEIRCmd() *cobra.Command {
	var o experimentBEIROptions
	beirCmd := &cobra.Command{
		Use:   "beir --data DIR [--index PATH [--pipeline FILE]] [--folds 5] [--unsupervised] --out DIR2",
		Short: "Full retrieval on a BEIR directory: BM25 top-100, then rerank, cross-validated",
		Long: `Index DIR's corpus, retrieve the BM25 top --depth for every judged query, and
rerank (when DIR has candidates.trec, as SemEval data does, its given lists
are reranked instead, and --depth is only the rerank window). Supervised (default), each query is reranked by a pipeline trained on
the other folds' queries only, and DIR2/pipeline.yaml is trained on them all.
--unsupervised reads no judgments but to score the runs: it fuses the
text-only stages (tfidf, bm25, length, wmd, ssg) and the first-stage rank
at equal weights, each scaled in every window by how far that signal agrees
with the others (--fusion agreement; --fusion equal keeps them fixed), and
smooths the fused scores over the window's nearest-neighbour graph
(--after-fusion regularize; none turns it off).
With --pseudo title,sentence (or terms) it self-trains instead: it draws
pseudo-queries from the corpus (a document's title for its body, a
sentence cut from it, or its salient words), trains TWEAK, S2Net and LSA
on them, and learns the stages and fusion weights that help on held-out
pseudo-queries; that fusion replaces the fixed equal weights only where it
beats them (and BM25) significantly there, and DIR2/stages.txt says why.
Either way DIR2/pipeline.yaml holds the pipeline. Writes DIR2/baseline.trec (BM25) and
DIR2/run.trec (reranked) and prints both runs' metrics. While it runs, DIR2 is
locked: a second recipe on DIR2 fails at once. The index it builds stays in
DIR2/index for serving or searching with DIR2/pipeline.yaml; to run the recipe again into DIR2,
remove DIR2/index first (the recipe does not delete an index it finds), and,
when switching to --unsupervised or to fewer folds, the
earlier run's foldN folders, which it names. --vectors FILE
starts the word vectors of the wmd and ssg stages from pre-trained ones
(scripts/wink_glove.py writes a public GloVe-derived set) and fine-tunes them
on DIR's text, as semrank train embed --vectors does.

--index PATH runs the recipe over an existing index instead, any Bleve index
(one an application built with its own mapping): nothing is indexed, DIR's
corpus.jsonl is not read, the documents are the index's, read through the
fields that --pipeline's fields: key names (its first_stage: too; its stages
are not used), and the first stage is the index's own search (for a mapping
semrank did not write, a match query on its default field). The published
pipelines name those fields.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runExperimentBEIR(cmd, o) },
	}
	bf := beirCmd.Flags()
	bf.StringVar(&o.opts.Data, "data", "", "BEIR directory with qrels/test.tsv")
	bf.StringVar(&o.opts.Out, "out", "", "output directory")
	bf.IntVar(&o.opts.Folds, "folds", 5, "cross-validation folds (supervised)")
	bf.BoolVar(&o.opts.Unsupervised, "unsupervised", false, "use only stages that need no judgments")
	bf.StringArrayVar(&o.opts.Text, "text", nil, "BEIR directory whose queries and documents add unlabeled text for the stages that learn from text (repeatable; judgments not read)")
	bf.IntVar(&o.opts.Depth, "depth", 100, "first-stage candidates per query")
	bf.StringVar(&o.opts.Vectors, "vectors", "", "pre-trained word vectors (GloVe or word2vec text, word2vec binary, or a bundle) that the wmd and ssg stages fine-tune on DIR's text")
	bf.StringSliceVar(&o.pseudo, "pseudo", []string{"none"}, "--unsupervised: pseudo-query kinds drawn from the corpus to train stages and fusion on, in order of preference (title, sentence, terms; e.g. title,sentence), or none for the text-only stages fused without training (--fusion)")
	bf.IntVar(&o.opts.Pseudo.Queries, "pseudo-queries", recipe.DefaultPseudoQueries, "--unsupervised: pseudo-queries to draw")
	bf.IntVar(&o.opts.Pseudo.Neighbours, "pseudo-neighbours", recipe.DefaultPseudoNeighbours, "--unsupervised: make each pseudo-query's N nearest documents (BM25 of its whole document) weakly relevant; 0 for its own document alone")
	bf.StringVar(&o.opts.Fusion, "fusion", "", "fusion: supervised, linear (default) or lambdamart; --unsupervised (without --pseudo), agreement (default: equal weights scaled in each window by each signal's agreement with the others) or equal (fixed equal weights)")
	bf.Float64Var(&o.opts.FusionL2, "fusion-l2", 0, "L2 penalty of the linear fusion (0: 1e-3)")
	bf.StringVar(&o.opts.Index, "index", "", "an existing index (any Bleve index) to run over instead of indexing DIR's corpus")
	bf.StringVar(&o.beirPipeline, "pipeline", "", "with --index: pipeline file whose fields: and first_stage: say how its documents are read and searched")
	bf.StringVar(&o.feedback, "feedback", "none", "first-stage pseudo-relevance feedback: none, rm3 (10 documents, 30 terms, lambda 0.5), or docs=N,terms=N,lambda=X,idf=once,min_overlap=X,scope=query; the window is retrieved by the expanded query. auto (or auto,KEY=VALUE...) keeps it only where it beats BM25's window significantly on pseudo-queries drawn from the corpus")
	bf.StringSliceVar(&o.opts.Stages, "stages", nil, "stage types instead of the recipe's (e.g. lexical,meta,s2net; TYPE:KEY=VALUE sets an option)")
	bf.StringVar(&o.afterFusion, "after-fusion", "", "a step after the fusion of every pipeline the run publishes and scores: none, or regularize (the fused scores smoothed over the window's TF-IDF 10-nearest-neighbour graph, alpha 0.5; regularize:k=N:alpha=X:adaptive=true sets them), written as the pipeline's fusion.regularize (default: regularize for --unsupervised without --pseudo, none otherwise)")
	_ = beirCmd.MarkFlagRequired("data")
	_ = beirCmd.MarkFlagRequired("out")
	return beirCmd
}

// runExperimentBEIR runs semrank experiment beir.
func runExperimentBEIR(cmd *cobra.Command, o experimentBEIROptions) error {
	if o.opts.Unsupervised {
		// Read by supervised runs only: refused rather than
		// silently ignored.
		for _, f := range []string{"folds", "fusion-l2"} {
			if cmd.Flags().Changed(f) {
				return fmt.Errorf("--%s applies to supervised runs; --unsupervised learns a linear fusion on pseudo-queries, without folds", f)
			}
		}
		if f := o.opts.Fusion; cmd.Flags().Changed("fusion") {
			switch {
			case len(o.pseudo) > 0 && !slices.Equal(o.pseudo, []string{"none"}):
				return fmt.Errorf("--fusion %s: --unsupervised --pseudo learns its fusion on pseudo-queries; remove --fusion", f)
			case f != "agreement" && f != "equal":
				return fmt.Errorf("--fusion %s: --unsupervised fuses by agreement (default) or at fixed equal weights (equal)", f)
			}
		}
	} else if err := checkFolds(o.opts.Folds); err != nil {
		return err
	}
	// The recipe checks it only after indexing into DIR2/index,
	// which a second run then refuses to overwrite.
	if err := checkNonNegative(cmd, "fusion-l2", "pseudo-neighbours"); err != nil {
		return err
	}
	if err := checkFusionL2(cmd, o.opts.Fusion); err != nil {
		return err
	}
	if err := checkPositive(cmd, "depth"); err != nil {
		return err
	}
	if o.beirPipeline = pipelineFile(o.beirPipeline); o.beirPipeline != "" {
		if o.opts.Index == "" {
			return fmt.Errorf("--pipeline names the fields of --index's documents: give --index too")
		}
		cfg, err := rerank.ReadConfig(o.beirPipeline)
		if err != nil {
			return err
		}
		o.opts.Fields, o.opts.FirstStage = cfg.Fields, cfg.FirstStage
	}
	if cmd.Flags().Changed("feedback") {
		if o.opts.FirstStage.Feedback != nil {
			return fmt.Errorf("--feedback: --pipeline's first_stage sets feedback already; give one of them")
		}
		spec := strings.TrimSpace(o.feedback)
		if rest, ok := strings.CutPrefix(spec, "auto"); ok && (rest == "" || rest[0] == ',') {
			// The feedback to choose: the defaults, or the settings
			// after "auto,".
			o.opts.ChooseFeedback, spec = true, cmp.Or(rest[min(1, len(rest)):], "rm3")
		}
		fb, err := rerank.ParseFeedback(spec)
		if err != nil {
			return fmt.Errorf("--feedback: %w", err)
		}
		if fb == nil && o.opts.ChooseFeedback {
			return fmt.Errorf("--feedback %s: auto chooses between feedback and none; give the feedback's settings (auto, or auto,docs=10,...)", o.feedback)
		}
		o.opts.FirstStage.Feedback = fb
	}
	o.opts.Pseudo.Kinds = nil
	if !slices.Equal(o.pseudo, []string{"none"}) {
		o.opts.Pseudo.Kinds = o.pseudo
	}
	if cmd.Flags().Changed("pseudo") && !o.opts.Unsupervised {
		return fmt.Errorf("--pseudo applies to --unsupervised runs")
	}
	if err := checkPositive(cmd, "pseudo-queries"); err != nil {
		return err
	}
	for _, f := range []string{"pseudo-queries", "pseudo-neighbours"} {
		if cmd.Flags().Changed(f) && (!o.opts.Unsupervised || o.opts.Pseudo.Kinds == nil) && !o.opts.ChooseFeedback {
			return fmt.Errorf("--%s applies to --unsupervised runs that train on pseudo-queries (--pseudo) and to --feedback auto", f)
		}
	}
	if _, err := recipe.ParseAfterFusion(o.afterFusion); err != nil {
		return fmt.Errorf("--after-fusion: %w", err)
	}
	o.opts.AfterFusion = o.afterFusion
	o.opts.Log = cmd.OutOrStdout()
	return recipe.BEIR(cmd.Context(), o.opts)
}

// checkSplit accepts either cross-validation (--cv) or a train/test split
// (both --train and --test), never a mix, for the papers' experiments.
func checkSplit(cv, train, test bool) error {
	if cv && !train && !test || !cv && train && test {
		return nil
	}
	return fmt.Errorf("give either --cv DIR or both --train DIR and --test DIR")
}

// checkFolds rejects a --folds value that cannot split queries into
// training and held-out parts.
func checkFolds(k int) error {
	if k < 2 {
		return fmt.Errorf("--folds %d: want at least 2", k)
	}
	return nil
}

// checkFusionL2 refuses --fusion-l2 with the boosted-tree fusion, which
// has no L2 penalty: the value would be silently ignored.
func checkFusionL2(cmd *cobra.Command, fusion string) error {
	if strings.EqualFold(fusion, "lambdamart") {
		return checkUnused(cmd, "applies to the linear fusion, not --fusion lambdamart", "fusion-l2")
	}
	return nil
}
