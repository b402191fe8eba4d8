package rerank_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// TestWrapMatchesDatasetPath checks, on a real SemEval subtask A slice,
// that a library user searching through Wrap gets the ranking that
// semrank rerank computes for the same query text (index.TopN, then the
// pipeline): the same window, the same metadata and texts reaching the
// stages, the same fused order. The pipeline uses the stages that read
// metadata (position, asker, thread structure) and the other candidates'
// texts (peers), which a difference in what Wrap hands them would show.
func TestWrapMatchesDatasetPath(t *testing.T) {
	ds, idx := semevalAIndex(t)
	cfg := &rerank.Config{
		Window: 30,
		Stages: []rerank.StageSpec{
			{Type: "tfidf"},
			{Type: "tfidf", Name: "peers", Options: map[string]any{"peers": true}},
			{Type: "meta", Name: "position", Options: map[string]any{"field": "position", "transform": "neglog"}},
			{Type: "meta", Name: "asker", Options: map[string]any{"field": "by_question_author"}},
			{Type: "thread", Name: "user_repeats", Options: map[string]any{"feature": "user_repeats"}},
		},
		Fusion: rerank.FusionSpec{Method: "linear", Weights: map[string]float64{
			"tfidf": 1, "peers": 0.7, "position": 0.5, "asker": -2, "user_repeats": -0.3,
		}},
	}
	p, err := cfg.Build(rerank.EnvFor(idx))
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, q := range ds.Queries {
		scored, res, ok := bothPaths(t, p, idx, q)
		if !ok {
			continue // a query of stop words only
		}
		var want []string
		for _, s := range scored {
			want = append(want, s.ID)
		}
		if got := ids(res.Hits); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("query %s: Wrap ranks %v, the dataset path %v", q.ID, got, want)
		}
		compared++
	}
	if compared < len(ds.Queries)/2 {
		t.Fatalf("compared %d of %d queries", compared, len(ds.Queries))
	}
}

// TestWrapPreparedQueriesMatch: the lexical stages' query work, which
// Wrap starts beside the window's search (rerank.QueryPreparer), gives
// the scores the dataset path computes as the stages score, to the bit.
func TestWrapPreparedQueriesMatch(t *testing.T) {
	ds, idx := semevalAIndex(t)
	cfg := &rerank.Config{
		Window: 30,
		Stages: []rerank.StageSpec{{Type: "tfidf"}, {Type: "bm25"}, {Type: "overlap"}, {Type: "length"}},
		Fusion: rerank.FusionSpec{Method: "linear", Weights: map[string]float64{"tfidf": 1, "bm25": 0.3, "overlap": 0.2, "length": -0.1}},
	}
	p, err := cfg.Build(rerank.EnvFor(idx))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range ds.Queries {
		scored, res, ok := bothPaths(t, p, idx, q)
		if !ok {
			continue // a query of stop words only
		}
		if len(res.Hits) != len(scored) {
			t.Fatalf("query %s: %d hits, the dataset path %d", q.ID, len(res.Hits), len(scored))
		}
		for i, h := range res.Hits {
			if h.ID != scored[i].ID || math.Float64bits(h.Score) != math.Float64bits(scored[i].Score) {
				t.Fatalf("query %s, hit %d: %s %v, the dataset path %s %v", q.ID, i+1, h.ID, h.Score, scored[i].ID, scored[i].Score)
			}
		}
	}
}

// bothPaths ranks q's window by the dataset path (index.TopN, then
// p.Rerank) and by a search through Wrap; ok is false when q is stop
// words only.
func bothPaths(t *testing.T, p *rerank.Pipeline, idx *index.Index, q dataset.Query) (scored []rerank.Scored, res *bleve.SearchResult, ok bool) {
	t.Helper()
	ctx := context.Background()
	bq, err := p.Query(q.FullText())
	if err != nil {
		return nil, nil, false
	}
	hits, err := idx.TopN(ctx, bq, p.WindowSize())
	if err != nil {
		t.Fatal(err)
	}
	if scored, err = p.Rerank(ctx, rerank.Query{ID: q.ID, Text: q.FullText()}, hits); err != nil {
		t.Fatal(err)
	}
	if res, err = rerank.Wrap(idx, p).Search(bleve.NewSearchRequestOptions(bq, p.WindowSize(), 0, false)); err != nil {
		t.Fatal(err)
	}
	return scored, res, true
}

// semevalAIndex returns the SemEval subtask A slice in testdata and an
// index of its documents.
func semevalAIndex(t *testing.T) (*dataset.Dataset, *index.Index) {
	t.Helper()
	ds, err := dataset.Load("../testdata/deepmatch/semeval-a")
	if err != nil {
		t.Fatal(err)
	}
	return ds, newIndex(t, ds.Corpus)
}
