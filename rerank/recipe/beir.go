package recipe

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/internal/atomicfile"
	"github.com/semrank/semrank/rerank"
)

// BEIROptions configure the full-retrieval experiment on a BEIR directory.
type BEIROptions struct {
	Data         string // BEIR directory with qrels
	Out          string // output directory
	Folds        int    // outer cross-validation folds, at least 2; 5 when zero
	Unsupervised bool   // read no judgments but to score the runs (see Pseudo)
	Depth        int    // first-stage candidates; 100 when zero
	// Fusion is the fusion of the pipelines the run trains: supervised,
	// linear (default) or lambdamart; unsupervised at fixed stages
	// (without Pseudo), agreement (default: the stages' and first
	// stage's equal weights scaled by their agreement in each window,
	// see rerank.Agreement) or equal (the fixed equal weights alone).
	// A self-trained run learns its fusion and takes none.
	Fusion   string
	FusionL2 float64 // L2 penalty of a linear fusion; learn.LinearOptions' default when zero
	// Stages are stage type names used instead of the recipe's (see
	// ParseStages), e.g. a SemEval pipeline cross-validated over queries.
	Stages []string
	// Text names BEIR directories whose queries and documents join the
	// corpus as unlabeled in-domain text for the stages that learn from
	// text (vocabularies, LSA, word vectors, topic models); their
	// judgments are not read.
	Text []string
	// Vectors, when set, is a file of pre-trained word vectors (GloVe or
	// word2vec text, word2vec binary, or an embed bundle) that the
	// stages learning word vectors (wmd, ssg) fine-tune on the text
	// instead of starting from random ones (their training option
	// embed_init; see WithVectors).
	Vectors string
	// Index, when set, names an existing index, any Bleve index, whose
	// documents are the collection (o.Data's corpus.jsonl is not read):
	// no index is built, its first stage gives the candidates, and the
	// stages read its documents through Fields, the first stage
	// searching FirstStage's fields (see rerank.Config).
	Index      string
	Fields     rerank.Fields
	FirstStage rerank.FirstStage
	// Pseudo, when its Kinds are set, makes an unsupervised run train
	// on pseudo-queries of those kinds drawn from the corpus (see
	// SelfTrainedStages and Select); without, an unsupervised run fuses
	// UnsupervisedStages as Fusion says.
	Pseudo PseudoOptions
	// ChooseFeedback, with FirstStage.Feedback set, keeps that feedback
	// only where ChooseFeedback finds that it helps on pseudo-queries
	// drawn from the corpus (Pseudo's options, its kinds
	// DefaultPseudoKinds when unset), reading no judgments; the report
	// and log say what it measured.
	ChooseFeedback bool
	// AfterFusion is the step after the fusion of every pipeline the
	// run publishes and scores, as ParseAfterFusion reads it: none, or
	// regularize[:KEY=VALUE...] (a pipeline's fusion.regularize). Empty
	// means the recipe's own: regularize for an unsupervised run at
	// fixed stages, none for the others.
	AfterFusion string
	Log         io.Writer
}

// DefaultPseudoKinds are the pseudo-queries a self-trained run is
// measured with in docs/RESULTS.md: a document's title where it has one,
// otherwise one of its sentences.
func DefaultPseudoKinds() []string { return []string{PseudoTitle, PseudoSentence} }

// SupervisedStages are the BEIR recipe's stages when judgments may be
// used: lexical features, TWEAK, and the concept-vector stages S2Net and
// LSA (S2Net is the strongest single learned stage on CACM and SemEval B in
// docs/RESULTS.md).
func SupervisedStages() []rerank.StageSpec {
	return append(LexicalStages(), Trained(
		rerank.StageSpec{Type: "tweak"},
		rerank.StageSpec{Type: "s2net"},
		rerank.StageSpec{Type: "lsa"},
	)...)
}

// UnsupervisedStages need no judgments: the lexical scores tfidf, bm25
// and length and the unsupervised semantic stages (wmd, ssg) this build
// has, fused with the first-stage rank: by agreement in the
// unsupervised recipe without pseudo-queries (BEIROptions.Fusion), at
// fixed equal weights in the prior the self-trained recipe's learned
// fusion competes with (see Select). Of
// LexicalStages, overlap is left out (UnsupervisedLeftOut): the share of
// query words a candidate holds is what tfidf and bm25 already weigh,
// better, and a fusion with fixed weights cannot learn to discount a third
// copy of that evidence; without it the recipe's MAP rose on all six
// development collections of docs/RESULTS.md (CACM, MED, LISA, TIME, ADI,
// SemEval-2016 B). Length, weak alone, stays: a document-length prior the
// query-matching stages lack. RM3 pseudo-relevance feedback (stage rm3)
// is not among them (the self-trained recipe may choose it): alone it beats BM25 on four of those collections,
// but added to this fusion it lowered MAP on CACM and LISA, and so did
// pre-trained word vectors (BEIROptions.Vectors); the section "Learning
// without judgments (issue 26)" there has the measurements, which used
// those collections' judgments to choose.
func UnsupervisedStages() []rerank.StageSpec {
	return append([]rerank.StageSpec{{Type: "tfidf"}, {Type: "bm25"}, {Type: "length"}}, Available(
		rerank.StageSpec{Type: "wmd"},
		rerank.StageSpec{Type: "ssg"},
	)...)
}

// UnsupervisedLeftOut names the stages of LexicalStages that
// UnsupervisedStages leaves out, for the recipe's report.
func UnsupervisedLeftOut() []string {
	var out []string
	kept := stageNames(UnsupervisedStages())
	for _, s := range LexicalStages() {
		if !slices.Contains(kept, s.Type) {
			out = append(out, s.Type)
		}
	}
	return out
}

// BEIR retrieves the top Depth documents by BM25 for every query of
// o.Data, reranks them, and writes o.Out/baseline.trec (BM25) and
// o.Out/run.trec (reranked), and o.Out/pipeline.yaml, a pipeline to
// serve against o.Out/index. Supervised, every query is reranked by a
// pipeline trained (with cross-fitting) on the other folds' queries only,
// so no query is scored by a model that saw its judgments, and
// pipeline.yaml is then trained on every judged query. Unsupervised, no
// judgment is read but to score the runs. With o.Pseudo's kinds set
// (self-training), the stages of SelfTrainedStages learn from
// pseudo-queries drawn from the corpus,
// Select keeps those that help on held-out pseudo-queries and learns
// their fusion weights, and that fusion replaces UnsupervisedStages at
// fixed equal weights where it beats them significantly there (with
// custom Stages, where it beats the first stage; otherwise none is
// kept); pipeline.yaml holds the kept stages and o.Out/stages.txt says
// which were kept and why. Without pseudo-query kinds, one pipeline fuses
// UnsupervisedStages as o.Fusion says (by agreement unless "equal"),
// and the report gives the agreement fusion's mean weights.
//
// Once its options are checked, BEIR locks Out for the rest of the run,
// and each fold's directory before training there, as Fit does: a second
// run on Out fails at once. The pipelines (the folds' and
// Out/pipeline.yaml with its models) are published as Fit publishes
// them, and each run file is written atomically; the pair is not (an
// earlier pair is removed when the first pipeline is replaced,
// so an interrupted run leaves none rather than stale ones). Out/index is
// built in a staging directory and renamed into place when whole, so a
// run killed while indexing leaves no partial index there.
func BEIR(ctx context.Context, o BEIROptions) error {
	start := time.Now()
	logf := logTo(o.Log)
	var err error
	if o.Folds, err = foldCount(o.Folds); err != nil {
		return err
	}
	if o.Depth < 0 {
		return fmt.Errorf("recipe: depth %d, want ≥ 0 (0 means the default, 100)", o.Depth)
	}
	selfTrain := o.Unsupervised && len(o.Pseudo.Kinds) > 0
	if err := checkBEIRFusion(o.Fusion, o.Unsupervised, selfTrain); err != nil {
		return err
	}
	afterFusion := o.AfterFusion
	if afterFusion == "" && o.Unsupervised && !selfTrain {
		afterFusion = "regularize"
	}
	regularize, err := ParseAfterFusion(afterFusion)
	if err != nil {
		return err
	}
	supervised, unsupervised := SupervisedStages(), UnsupervisedStages()
	if selfTrain {
		if o.Index != "" {
			// Its pseudo-queries' index is semrank's, with semrank's
			// fields, not the given index's.
			return fmt.Errorf("recipe: self-training over a given index is not supported; run the unsupervised recipe with fixed weights over it, or without an index over the collection's corpus.jsonl")
		}
		unsupervised = SelfTrainedStages()
		if err := CheckPseudoKinds(o.Pseudo.Kinds); err != nil {
			return err
		}
	}
	if len(o.Stages) > 0 {
		specs, err := ParseStages(o.Stages)
		if err != nil {
			return err
		}
		supervised, unsupervised = specs, specs
	}
	if o.Vectors != "" {
		// Only the stages this run trains: the others' would be refused
		// for lacking wmd or ssg.
		if o.Unsupervised {
			unsupervised, err = WithVectors(unsupervised, o.Vectors)
		} else {
			supervised, err = WithVectors(supervised, o.Vectors)
		}
		if err != nil {
			return err
		}
	}
	if o.ChooseFeedback && o.FirstStage.Feedback == nil {
		return fmt.Errorf("recipe: choosing feedback needs the feedback to choose (first_stage.feedback)")
	}
	if o.ChooseFeedback && o.Index != "" {
		// Its pseudo-queries' index is semrank's, as self-training's.
		return fmt.Errorf("recipe: choosing feedback over a given index is not supported; give the feedback or none")
	}
	var given bleve.Index
	var ds *dataset.Dataset
	if o.Index != "" {
		if given, ds, err = o.openIndex(ctx); err != nil {
			return err
		}
		defer given.Close()
	} else if ds, err = dataset.Load(o.Data); err != nil {
		return err
	}
	var extra []string
	for _, dir := range o.Text {
		more, err := loadText(dir)
		if err != nil {
			return err
		}
		extra = append(extra, more...)
	}
	text := append(corpusText(ds), extra...)
	if ds.Qrels == nil {
		return fmt.Errorf("recipe: %s has no judgments (qrels/test.tsv)", o.Data)
	}
	judged := 0
	for _, q := range ds.Queries {
		if _, ok := ds.Qrels[q.ID]; ok {
			judged++
		}
	}
	if !o.Unsupervised && o.Folds > judged {
		return fmt.Errorf("recipe: %d folds over %d judged queries: want at most one fold per query", o.Folds, judged)
	}
	lock, err := lockOut(o.Out, logf)
	if err != nil {
		return err
	}
	defer lock.Release()
	// The input is read before Out is locked and written, so a mistyped
	// path leaves no folder behind. What an earlier (or interrupted) run
	// left in Out that this one would not replace stops it; say so before
	// anything is written, and how to go on.
	if left := earlierRun(o.Out, o.Unsupervised, o.Folds); len(left) > 0 {
		return fmt.Errorf("recipe: %s holds %s from an earlier run; remove %s (or the whole folder) or choose another output folder", o.Out, strings.Join(left, ", "), map[bool]string{true: "them", false: "it"}[len(left) > 1])
	}
	// Only judged queries are evaluated and folded.
	ds = ds.Subset(func(qid string) bool { _, ok := ds.Qrels[qid]; return ok })
	if o.Depth == 0 {
		o.Depth = 100
	}
	idx := given
	if idx == nil {
		si, err := stagedIndex(ctx, ds, o.Out)
		if err != nil {
			return err
		}
		defer si.Close()
		idx = si
		logf("indexed %d documents (%s)", len(ds.Corpus), time.Since(start).Round(time.Second))
	}
	var choice *FeedbackChoice
	if o.ChooseFeedback {
		po := o.Pseudo
		if len(po.Kinds) == 0 {
			po.Kinds = DefaultPseudoKinds()
		}
		c, err := ChooseFeedback(ctx, ds.Corpus, *o.FirstStage.Feedback, o.Depth, po, o.Out)
		if err != nil {
			return err
		}
		logf("%s (%s)", c, time.Since(start).Round(time.Second))
		if !c.Kept {
			o.FirstStage.Feedback = nil
		}
		choice = &c
	}

	// The run files come from the pipelines: the earlier ones go when the
	// first of those pipelines is replaced.
	runFiles := []string{filepath.Join(o.Out, "baseline.trec"), filepath.Join(o.Out, "run.trec")}
	stagesFile := filepath.Join(o.Out, StagesFile)
	var runs Runs
	var selection *Selection
	switch {
	case o.Unsupervised && !selfTrain:
		r := &Recipe{Stages: unsupervised, Fusion: o.Fusion, Window: o.Depth, Text: text, Log: o.Log, supersedes: append(runFiles, stagesFile), Index: given, Fields: o.Fields, FirstStage: o.FirstStage, Regularize: regularize}
		path, err := r.fitUnsupervised(ctx, ds, idx, o.Out)
		if err != nil {
			return err
		}
		if runs, err = runPipeline(ctx, path, idx, ds); err != nil {
			return err
		}
	case o.Unsupervised:
		r := &Recipe{Stages: unsupervised, Folds: pseudoFolds, L2: o.FusionL2, Window: o.Depth, Text: text, Log: o.Log, supersedes: append(runFiles, stagesFile), Index: given, Fields: o.Fields, FirstStage: o.FirstStage, Regularize: regularize}
		// The recipe's own stages compete with their fusion at fixed
		// equal weights.
		var prior *rerank.Linear
		if len(o.Stages) == 0 {
			prior = EqualWeights(UnsupervisedStages())
		}
		st, err := r.fitSelfTrained(ctx, ds, idx, o.Out, o.Pseudo, extra, prior)
		if err != nil {
			return err
		}
		selection = st.selection
		// The reporting pipeline ranks as the published one does and
		// also scores the stages it dropped, for their rows.
		if runs, err = RunAll(ctx, idx, ds, st.reporting); err != nil {
			return err
		}
		if err := atomicfile.Write(stagesFile, selection.Write); err != nil {
			return err
		}
	default:
		for k, fold := range ds.Folds(o.Folds) {
			train := ds.Subset(dataset.NotInSet(fold))
			test := ds.Subset(dataset.InSet(fold))
			dir := filepath.Join(o.Out, fmt.Sprintf("fold%d", k+1))
			lock, err := lockOut(dir, logf)
			if err != nil {
				return err
			}
			logf("training fold %d of %d on %d queries (%s)", k+1, o.Folds, len(train.Qrels), time.Since(start).Round(time.Second))
			r := &Recipe{Stages: supervised, Fusion: o.Fusion, L2: o.FusionL2, Folds: 3, Window: o.Depth, Text: text, Index: given, Fields: o.Fields, FirstStage: o.FirstStage, Regularize: regularize}
			if k == 0 {
				r.supersedes = append(runFiles, stagesFile)
			}
			path, err := r.fit(ctx, train, nil, dir)
			var fr Runs
			if err == nil {
				// Still locked: the pipeline run is the one just
				// fitted.
				fr, err = runPipeline(ctx, path, idx, test)
			}
			lock.Release()
			if err != nil {
				return err
			}
			runs.Merge(fr)
			logf("fold %d/%d: trained on %d queries, reranked %d (%s)", k+1, o.Folds, len(train.Qrels), len(test.Qrels), time.Since(start).Round(time.Second))
		}
		// The pipeline to serve: trained on every judged query.
		logf("training the final pipeline on all %d judged queries (%s)", len(ds.Qrels), time.Since(start).Round(time.Second))
		r := &Recipe{Stages: supervised, Fusion: o.Fusion, L2: o.FusionL2, Folds: 3, Window: o.Depth, Text: text, Regularize: regularize}
		if _, err := r.fit(ctx, ds, nil, o.Out); err != nil {
			return err
		}
	}
	if err := runs.Runs["first stage (BM25)"].WriteFile(runFiles[0], "bm25"); err != nil {
		return err
	}
	if err := runs.Runs["fused pipeline"].WriteFile(runFiles[1], "semrank"); err != nil {
		return err
	}
	w := o.Log
	if w == nil {
		w = io.Discard
	}
	what := fmt.Sprintf("BM25 top %d reranked", o.Depth)
	if o.FirstStage.Feedback != nil {
		what = fmt.Sprintf("BM25+RM3 (first-stage feedback) top %d reranked", o.Depth)
	}
	if ds.Candidates != nil {
		what = "given candidates reranked"
	}
	fmt.Fprintf(w, "\n%s, %s (%s):\n", o.Data, what, map[bool]string{true: "unsupervised", false: fmt.Sprintf("supervised, %d-fold cross-validation", o.Folds)}[o.Unsupervised])
	if choice != nil {
		fmt.Fprintln(w, choice)
	}
	switch {
	case selection != nil:
		if err := selection.Write(w); err != nil {
			return err
		}
	case o.Unsupervised:
		fmt.Fprintln(w, unsupervisedNote(unsupervised, o.Fusion, len(o.Stages) > 0, o.Vectors != ""))
	}
	if note := WeightsNote(runs.Weights); note != "" {
		fmt.Fprintln(w, note)
	}
	if regularize != nil {
		fmt.Fprintln(w, afterFusionNote(*regularize))
	}
	// With given candidate lists (SemEval), the given order is the
	// baseline to beat.
	baseline := "first stage (BM25)"
	if ds.Candidates != nil {
		baseline = "given order"
	}
	if err := Table(w, ds.Qrels, runs, baseline, eval.MustParseMetrics("map,ndcg@10,r@100,p@10,map@10,mrr@10"), false); err != nil {
		return err
	}
	logf("wrote %s and %s (%s)", filepath.Join(o.Out, "baseline.trec"), filepath.Join(o.Out, "run.trec"), time.Since(start).Round(time.Second))
	return nil
}

// afterFusionNote says, for a run's report, what its step after the
// fusion does with the options opts.
func afterFusionNote(opts map[string]any) string {
	set := "defaults"
	if len(opts) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(opts)) {
			kv = append(kv, fmt.Sprintf("%s=%v", k, opts[k]))
		}
		set = strings.Join(kv, ", ")
	}
	return fmt.Sprintf("after the fusion: its scores regularized over the window's TF-IDF nearest-neighbour graph (fusion.regularize; k 10 and alpha 0.5 unless set; set: %s)", set)
}

// fitUnsupervised trains the stages into a staging directory in dir with
// no judgments and publishes them, with a pipeline.yaml that fuses them
// by agreement (or, with r.Fusion "equal", at fixed equal weights), as
// Fit publishes a pipeline. It returns the
// pipeline file's path.
func (r *Recipe) fitUnsupervised(ctx context.Context, ds *dataset.Dataset, idx bleve.Index, dir string) (string, error) {
	staging, err := os.MkdirTemp(dir, stagingPattern)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(staging)
	specs, err := r.trainStages(ctx, ds.Subset(func(string) bool { return false }), nil, idx, filepath.Join(staging, "models"))
	if err != nil {
		return "", err
	}
	f := rerank.FusionSpec{Method: "agreement"}
	if r.Fusion == "equal" {
		f.Method = "" // linear, at equal weights
	}
	return r.publishConfig(ctx, r.config(specs, r.published(f)), staging, dir)
}

// checkBEIRFusion refuses a fusion that a BEIR run of the kind asked for
// cannot use (see BEIROptions.Fusion).
func checkBEIRFusion(method string, unsupervised, selfTrain bool) error {
	switch {
	case selfTrain:
		if method != "" {
			return fmt.Errorf("recipe: fusion %q: a self-trained run learns its fusion on pseudo-queries and takes none", method)
		}
	case unsupervised:
		if method != "" && method != "agreement" && method != "equal" {
			return fmt.Errorf("recipe: fusion %q for an unsupervised run: want agreement (default) or equal", method)
		}
	default:
		return checkFusion(method)
	}
	return nil
}

// runPipeline reranks ds with the pipeline file at path; see RunAll.
func runPipeline(ctx context.Context, path string, idx bleve.Index, ds *dataset.Dataset) (Runs, error) {
	p, _, err := rerank.LoadPipeline(path, rerank.EnvOf(idx))
	if err != nil {
		return Runs{}, err
	}
	return RunAll(ctx, idx, ds, p)
}

// stagedIndex indexes ds's corpus into out/index. The index is built in
// a staging directory (see stagingPattern) and renamed into place once it
// is whole, so out/index is never a partial index: one left by a killed
// run is a staging directory, which the next run's lockOut removes.
func stagedIndex(ctx context.Context, ds *dataset.Dataset, out string) (*index.Index, error) {
	staging := filepath.Join(out, stagingPrefix+"index")
	final := filepath.Join(out, "index")
	idx, err := CorpusIndex(ctx, ds, staging)
	if err != nil {
		return nil, err
	}
	testHookIndexed(staging)
	// Bleve and the payload store keep the path they were opened at: the
	// index is closed for the rename and opened again where it now is.
	if err := idx.Close(); err != nil {
		os.RemoveAll(staging)
		return nil, err
	}
	if err := os.Rename(staging, final); err != nil {
		os.RemoveAll(staging)
		return nil, fmt.Errorf("recipe: publishing the index: %w", err)
	}
	return index.Open(final)
}

// testHookIndexed is called with the staging path once the index is
// built there, before it is published.
var testHookIndexed = func(string) {}

// openIndex opens o.Index and reads o.Data's queries and judgments over
// its documents, read through o.Fields.
func (o BEIROptions) openIndex(ctx context.Context) (bleve.Index, *dataset.Dataset, error) {
	idx, err := index.OpenAny(o.Index)
	if err != nil {
		return nil, nil, err
	}
	ds, err := func() (*dataset.Dataset, error) {
		p, err := rerank.FirstStageOf(idx, &rerank.Config{Fields: o.Fields, FirstStage: o.FirstStage}, 0)
		if err != nil {
			return nil, err
		}
		if err := index.CheckFields(idx, p.Fields.All()...); err != nil {
			return nil, err
		}
		docs, err := rerank.IndexCorpus(ctx, idx, p)
		if err != nil {
			return nil, err
		}
		return dataset.LoadWith(o.Data, docs)
	}()
	if err != nil {
		idx.Close()
		return nil, nil, fmt.Errorf("recipe: %s: %w", o.Index, err)
	}
	return idx, ds, nil
}

// earlierRun lists what an earlier run left in out that this run would
// neither replace nor remove: the index, built afresh by every run;
// beside an unsupervised run's pipeline, any fold; beside supervised
// folds, folds beyond this run's count. Both kinds of run publish
// out/pipeline.yaml and replace the other's; the folds tell a supervised
// run's output from an unsupervised one's.
func earlierRun(out string, unsupervised bool, folds int) []string {
	var left []string
	if _, err := os.Lstat(filepath.Join(out, "index")); err == nil {
		left = append(left, filepath.Join(out, "index"))
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		k, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "fold"))
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "fold") || err != nil {
			continue
		}
		if unsupervised || k > folds {
			left = append(left, filepath.Join(out, e.Name()))
		}
	}
	return left
}

// loadText reads the documents and queries (if any) of a BEIR directory
// given for its text alone: its judgments and candidate lists are not
// read, so they cannot stop the run.
func loadText(dir string) ([]string, error) {
	docs, qs, err := dataset.LoadText(dir)
	if err != nil {
		return nil, err
	}
	text := make([]string, 0, len(docs)+len(qs))
	for _, d := range docs {
		text = append(text, d.FullText())
	}
	for _, q := range qs {
		text = append(text, q.FullText())
	}
	return text, nil
}

func corpusText(ds *dataset.Dataset) []string {
	out := make([]string, 0, len(ds.Corpus)+len(ds.Queries))
	for _, d := range ds.Corpus {
		out = append(out, d.FullText())
	}
	return out
}

// WithVectors returns specs with the wmd and ssg stages that train their
// word vectors (those naming no model) set to fine-tune the pre-trained
// vectors in path (training option embed_init, made absolute so that it
// still names the file from another directory). It refuses a path it
// cannot read and specs with no such stage, where the vectors would go
// unused.
func WithVectors(specs []rerank.StageSpec, path string) ([]rerank.StageSpec, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("recipe: word vectors: %w", err)
	} else if fi.IsDir() {
		return nil, fmt.Errorf("recipe: word vectors %s is a directory, want a file", path)
	}
	out := slices.Clone(specs)
	used := false
	for i, s := range out {
		if (s.Type != "wmd" && s.Type != "ssg") || s.Model != "" {
			continue
		}
		s.Options = maps.Clone(s.Options)
		if s.Options == nil {
			s.Options = map[string]any{}
		}
		s.Options["embed_init"] = abs
		out[i], used = s, true
	}
	if !used {
		return nil, fmt.Errorf("recipe: word vectors %s, but no stage learns word vectors (wmd or ssg without a model)", path)
	}
	return out, nil
}

// unsupervisedNote says which stages an unsupervised run fused, and how:
// the recipe's own (custom false) also names the lexical stages it left
// out.
func unsupervisedNote(specs []rerank.StageSpec, fusion string, custom, vectors bool) string {
	how := "weights scaled in each window by their agreement with the others (fusion method agreement)"
	if fusion == "equal" {
		how = "fixed equal weights"
	}
	note := fmt.Sprintf("stages kept: %s, fused with first_rank at %s", strings.Join(stageNames(specs), ", "), how)
	if !custom {
		if out := UnsupervisedLeftOut(); len(out) > 0 {
			note += fmt.Sprintf("; left out: %s (what tfidf and bm25 weigh already)", strings.Join(out, ", "))
		}
	}
	if vectors {
		note += "; word vectors fine-tuned from --vectors"
	}
	return note
}
