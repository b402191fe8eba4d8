package recipe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/offline"
)

// FeedbackChoice is what ChooseFeedback measured: the first stage's
// window with feedback against the same window without it, on
// pseudo-queries drawn from the corpus.
type FeedbackChoice struct {
	Feedback rerank.Feedback // the feedback measured, defaults filled in
	Queries  int             // pseudo-queries scored
	// Graded compares trec MAP with the pseudo-query's own document and
	// its neighbours relevant (see PseudoOptions.Neighbours): what
	// decides.
	Graded eval.Comparison
	// KnownItem compares MAP with the own document alone relevant (the
	// reciprocal rank of the document the query was cut from), for the
	// report.
	KnownItem eval.Comparison
	Kept      bool
}

// String says what was measured and what was chosen, in one line.
func (c FeedbackChoice) String() string {
	verdict := "kept"
	if !c.Kept {
		verdict = fmt.Sprintf("left out (want a gain with p < %g)", minGainP)
	}
	return fmt.Sprintf("first-stage feedback (docs %d, terms %d, lambda %g, min_overlap %g) on %d pseudo-queries: MAP %.4f → %.4f (%+.4f, p = %.4f, %d better, %d worse); own document alone %.4f → %.4f (%+.4f, p = %.4f): %s",
		c.Feedback.Docs, c.Feedback.Terms, *c.Feedback.Lambda, c.Feedback.MinOverlap, c.Queries,
		c.Graded.MeanB, c.Graded.MeanA, c.Graded.Delta, c.Graded.PTTest, c.Graded.Improved, c.Graded.Hurt,
		c.KnownItem.MeanB, c.KnownItem.MeanA, c.KnownItem.Delta, c.KnownItem.PTTest, verdict)
}

// ChooseFeedback decides from corpus alone, without judgments, whether
// the first-stage feedback fb is worth having on this collection. It
// draws pseudo-queries (Pseudo, with po's kinds and neighbours), indexes
// the corpus they were cut from in a scratch directory under dir, and
// retrieves each query's top depth documents with and without fb; fb is
// kept when the window's MAP, the query's own document and its
// neighbours relevant, rises significantly (paired t-test, p < 0.05).
// Feedback that re-retrieves wins on some collections and loses on most
// (docs/RESULTS.md), and its gain or loss shows in the window's first
// stage alone, so this costs two searches a pseudo-query and one index of
// the corpus.
func ChooseFeedback(ctx context.Context, corpus []dataset.Doc, fb rerank.Feedback, depth int, po PseudoOptions, dir string) (FeedbackChoice, error) {
	pseudo, err := Pseudo(corpus, po)
	if err != nil {
		return FeedbackChoice{}, err
	}
	scratch, err := os.MkdirTemp(dir, stagingPattern)
	if err != nil {
		return FeedbackChoice{}, err
	}
	defer os.RemoveAll(scratch)
	pidx, err := CorpusIndex(ctx, pseudo, filepath.Join(scratch, "pseudo.idx"))
	if err != nil {
		return FeedbackChoice{}, err
	}
	defer pidx.Close()
	if po.Neighbours > 0 {
		if err := addNeighbours(ctx, pseudo, &dataset.Dataset{Corpus: corpus}, pidx, po.Neighbours); err != nil {
			return FeedbackChoice{}, err
		}
	}
	with, err := rerank.FirstStageOf(pidx, &rerank.Config{FirstStage: rerank.FirstStage{Feedback: &fb}}, depth)
	if err != nil {
		return FeedbackChoice{}, err
	}
	runs := make([]dataset.Run, 2)
	for i, p := range []*rerank.Pipeline{with, with.Unexpanded()} {
		if runs[i], _, err = offline.RunDataset(ctx, pidx, pseudo, p, depth, nil); err != nil {
			return FeedbackChoice{}, err
		}
	}
	c := FeedbackChoice{Feedback: *with.Feedback(), Queries: len(pseudo.Queries)}
	own := dataset.Qrels{}
	for qid := range pseudo.Qrels {
		own[qid] = map[string]int{pseudoSource(qid): 1}
	}
	if c.Graded, err = compareRuns(pseudo.Qrels, runs[0], runs[1]); err != nil {
		return FeedbackChoice{}, err
	}
	if c.KnownItem, err = compareRuns(own, runs[0], runs[1]); err != nil {
		return FeedbackChoice{}, err
	}
	c.Kept = c.Graded.Delta > 0 && c.Graded.PTTest < minGainP
	return c, nil
}

// compareRuns compares a's and b's trec MAP on qrels, query by query.
func compareRuns(qrels dataset.Qrels, a, b dataset.Run) (eval.Comparison, error) {
	m := eval.MustParseMetrics("map")
	ra, err := eval.Evaluate(qrels, a, m)
	if err != nil {
		return eval.Comparison{}, err
	}
	rb, err := eval.Evaluate(qrels, b, m)
	if err != nil {
		return eval.Comparison{}, err
	}
	return eval.Compare(ra.Column(0), rb.Column(0))
}
