package recipe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/learn"
	"github.com/semrank/semrank/rerank/offline"
)

// SelfTrainedStages are the stages the no-judgment recipe chooses from
// when it trains on pseudo-queries: those that learn from text alone
// (UnsupervisedStages, with rm3 pseudo-relevance feedback) and the
// supervised stages TWEAK, S2Net and LSA, trained on pseudo-queries
// drawn from the corpus instead of judged ones. Select keeps those that
// earn their place on this collection. DSE and DeepMatch are left out:
// trained on pseudo-queries, each ranks below BM25 alone on every
// development collection, and DSE trains for minutes where the other
// three take seconds.
func SelfTrainedStages() []rerank.StageSpec {
	return slices.Concat(UnsupervisedStages(), []rerank.StageSpec{{Type: "rm3"}}, Trained(
		rerank.StageSpec{Type: "tweak"},
		rerank.StageSpec{Type: "s2net"},
		rerank.StageSpec{Type: "lsa"},
	))
}

// StagesFile is the file in an unsupervised BEIR run's output folder
// that says which stages the recipe kept and why (Selection.Write).
const StagesFile = "stages.txt"

// pseudoFolds is the number of folds pseudo-queries are cross-fitted over.
const pseudoFolds = 3

// EqualWeights is the fusion of the stages specs name at equal weights
// with the first-stage rank, as a pipeline without fusion weights fuses
// them: the unsupervised recipe before self-training.
func EqualWeights(specs []rerank.StageSpec) *rerank.Linear {
	w := map[string]float64{rerank.FeatureFirstRank: 1}
	for _, s := range specs {
		w[s.DisplayName(s.Type)] = 1
	}
	return &rerank.Linear{Weights: w}
}

// learnsFromText reports whether a stage trains (if at all) on text
// alone, without judged queries: the trainers of wmd and ssg.
func learnsFromText(s rerank.StageSpec) bool {
	return !rerank.Trainable(s.Type) || s.Type == "wmd" || s.Type == "ssg"
}

// selfTrained is what fitSelfTrained returns: the published pipeline
// file, a pipeline over every candidate stage that ranks as the published
// one does (the dropped stages weigh zero), for reporting each stage
// alone, and the selection.
type selfTrained struct {
	path      string
	reporting *rerank.Pipeline
	selection *Selection
}

// fitSelfTrained trains r.Stages without judgments and publishes the
// stages that earn their place, as Fit publishes a pipeline.
//
// Stages learn from pseudo-queries drawn from the corpus (Pseudo), with
// the pseudo-query's document relevant and the rest of the first stage's
// window not, cross-fitted as Fit cross-fits judged queries: each
// pseudo-query's stage scores come from models trained on the other
// folds. Every model scoring pseudo-queries learns from the training
// corpus Pseudo returns, which lacks what the queries were cut from, so
// none has seen a query's text beside its document. Select then chooses
// the stages and learns the fusion weights on those scores. The final
// models of the kept stages are trained on every pseudo-query, and those
// that learn from text alone (wmd, ssg) on the whole corpus and extra,
// the text of r.Text beyond the corpus. A prior fusion, when given,
// competes with the learned one (see Select).
func (r *Recipe) fitSelfTrained(ctx context.Context, ds *dataset.Dataset, idx bleve.Index, dir string, po PseudoOptions, extra []string, prior *rerank.Linear) (*selfTrained, error) {
	start := time.Now()
	folds, err := foldCount(r.Folds)
	if err != nil {
		return nil, err
	}
	pseudo, err := Pseudo(ds.Corpus, po)
	if err != nil {
		return nil, err
	}
	staging, err := os.MkdirTemp(dir, stagingPattern)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging)
	tmp := filepath.Join(staging, ".scratch")
	models := filepath.Join(staging, "models")
	fromText, fromLabels := *r, *r
	fromText.Stages, fromLabels.Stages = nil, nil
	for _, s := range r.Stages {
		if learnsFromText(s) {
			fromText.Stages = append(fromText.Stages, s)
		} else {
			fromLabels.Stages = append(fromLabels.Stages, s)
		}
	}
	pseudoText := append(corpusText(pseudo), extra...)
	fromLabels.Text = pseudoText
	noQueries := func(d *dataset.Dataset) *dataset.Dataset { return d.Subset(func(string) bool { return false }) }
	textOnPseudo := fromText
	textOnPseudo.Text = pseudoText
	pseudoTextSpecs, err := textOnPseudo.trainStages(ctx, noQueries(pseudo), nil, idx, filepath.Join(tmp, "text"))
	if err != nil {
		return nil, err
	}
	r.logf("%d pseudo-queries drawn; stages trained on the text they were cut from: %v (%s)", len(pseudo.Queries), stageNames(pseudoTextSpecs), time.Since(start).Round(time.Second))
	pidx, err := CorpusIndex(ctx, pseudo, filepath.Join(tmp, "pseudo.idx"))
	if err != nil {
		return nil, err
	}
	defer pidx.Close()
	if po.Neighbours > 0 {
		if err := addNeighbours(ctx, pseudo, ds, pidx, po.Neighbours); err != nil {
			return nil, err
		}
	}
	// merged puts the specs back in r.Stages' order.
	merged := func(textSpecs, labelSpecs []rerank.StageSpec) []rerank.StageSpec {
		out := make([]rerank.StageSpec, 0, len(r.Stages))
		t, l := 0, 0
		for _, s := range r.Stages {
			if learnsFromText(s) {
				out, t = append(out, textSpecs[t]), t+1
			} else {
				out, l = append(out, labelSpecs[l]), l+1
			}
		}
		return out
	}
	var examples []learn.Example
	if len(fromLabels.Stages) == 0 {
		folds = 1
	}
	for k, fold := range pseudo.Folds(folds) {
		inner, held := pseudo.Subset(dataset.NotInSet(fold)), pseudo.Subset(dataset.InSet(fold))
		if folds == 1 {
			held = pseudo
		}
		var labelSpecs []rerank.StageSpec
		if len(fromLabels.Stages) > 0 {
			if labelSpecs, err = fromLabels.trainStages(ctx, inner, nil, pidx, filepath.Join(tmp, fmt.Sprintf("fold%d", k))); err != nil {
				return nil, err
			}
		}
		exs, err := r.examples(ctx, merged(pseudoTextSpecs, labelSpecs), pidx, held)
		if err != nil {
			return nil, err
		}
		examples = append(examples, exs...)
		r.logf("pseudo-query fold %d/%d: stages trained on %d pseudo-queries, scored %d (%s)", k+1, folds, len(inner.Qrels), len(exs), time.Since(start).Round(time.Second))
	}
	sel, err := Select(examples, learn.LinearOptions{L2: r.L2}, prior)
	if err != nil {
		return nil, err
	}
	textSpecs, err := fromText.trainStages(ctx, noQueries(ds), nil, idx, models)
	if err != nil {
		return nil, err
	}
	var labelSpecs []rerank.StageSpec
	if len(fromLabels.Stages) > 0 {
		if labelSpecs, err = fromLabels.trainStages(ctx, pseudo, nil, pidx, models); err != nil {
			return nil, err
		}
	}
	all := merged(textSpecs, labelSpecs)
	r.logf("final stage models trained on %d pseudo-queries (%s)", len(pseudo.Queries), time.Since(start).Round(time.Second))

	fusion := rerank.FusionSpec{Method: "none"}
	if sel.Fusion != nil {
		fusion = rerank.FusionSpec{Method: "linear", Weights: sel.Fusion.Weights}
	}
	fusion = r.published(fusion)
	reporting, err := r.config(all, fusion).Build(rerank.EnvOf(idx))
	if err != nil {
		return nil, err
	}
	var kept, dropped []rerank.StageSpec
	for _, s := range all {
		if slices.Contains(sel.Kept, s.DisplayName(s.Type)) {
			kept = append(kept, s)
		} else {
			dropped = append(dropped, s)
		}
	}
	if err := removeUnpublished(staging, kept, dropped); err != nil {
		return nil, err
	}
	path, err := r.publishConfig(ctx, r.config(kept, fusion), staging, dir)
	if err != nil {
		return nil, err
	}
	return &selfTrained{path: path, reporting: reporting, selection: sel}, nil
}

// removeUnpublished removes the model files of the dropped stages that
// the run wrote into staging and no kept stage uses (wmd and ssg may share
// a vectors file), so that they are not published. Files outside staging
// are the caller's, such as the pre-trained vectors a stage's training
// started from (its option embed_init) or a model a stage was given, and
// stay.
func removeUnpublished(staging string, kept, dropped []rerank.StageSpec) error {
	keep := (&rerank.Config{Stages: kept}).Files("", false)
	for _, f := range (&rerank.Config{Stages: dropped}).Files("", false) {
		if slices.Contains(keep, f) || !under(staging, f) {
			continue
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// addNeighbours makes each pseudo-query's k nearest documents weakly
// relevant (grade 1, the query's own document grade 2): the top k by BM25
// over idx (the pseudo-queries' training corpus) of the whole original
// document, itself excluded. Real queries have many relevant documents on
// one topic; a pseudo-query with its own document alone relevant asks
// for that document and no other, which a stage matching topics cannot
// tell from its neighbours.
func addNeighbours(ctx context.Context, pseudo, orig *dataset.Dataset, idx *index.Index, k int) error {
	docs := &dataset.Dataset{Corpus: pseudo.Corpus}
	for _, q := range pseudo.Queries {
		src := pseudoSource(q.ID)
		d, ok := orig.Doc(src)
		if !ok {
			return fmt.Errorf("recipe: pseudo-query %s: no document %q", q.ID, src)
		}
		docs.Queries = append(docs.Queries, dataset.Query{ID: q.ID, Text: d.FullText()})
	}
	run, err := offline.FirstStageRun(ctx, idx, docs, k+1, nil)
	if err != nil {
		return err
	}
	for _, q := range pseudo.Queries {
		src := pseudoSource(q.ID)
		pseudo.Qrels[q.ID] = map[string]int{src: 2}
		n := 0
		for _, e := range run.Ranking(q.ID) {
			if e.DocID != src && n < k {
				pseudo.Qrels[q.ID][e.DocID] = 1
				n++
			}
		}
	}
	return nil
}
