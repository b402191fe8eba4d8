package rerank_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/offline"
)

// plainIndex indexes ds's corpus as a Bleve application would, with
// bleve.NewIndexMapping() and field names of its own, subject and body,
// into a scorch index on disk.
func plainIndex(t testing.TB, ds *dataset.Dataset) bleve.Index {
	t.Helper()
	idx := plainIndexAt(t, ds, filepath.Join(t.TempDir(), "plain"))
	t.Cleanup(func() { idx.Close() })
	return idx
}

// plainIndexAt is plainIndex at path, left open for the caller to close.
func plainIndexAt(t testing.TB, ds *dataset.Dataset, path string) bleve.Index {
	t.Helper()
	idx, err := bleve.New(path, bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	b := idx.NewBatch()
	for _, d := range ds.Corpus {
		if err := b.Index(d.ID, map[string]any{"subject": d.Title, "body": d.Text}); err != nil {
			t.Fatal(err)
		}
	}
	if err := idx.Batch(b); err != nil {
		t.Fatal(err)
	}
	return idx
}

// plainPipeline is a lexical pipeline over plainIndex's fields.
func plainPipeline(t testing.TB, idx bleve.Index, window int) *rerank.Pipeline {
	t.Helper()
	cfg, err := rerank.ParseConfig([]byte(`
fields: {title: subject, text: [body]}
stages:
  - type: tfidf
  - type: bm25
  - type: overlap
  - type: length
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Window = window
	p, err := cfg.Build(rerank.EnvOf(idx))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlainIndexOnePath checks, on the demo's SemEval slice indexed by
// plain Bleve code, that the Searcher (semrank search), dataset runs
// (semrank run and rerank) and Wrap (a Bleve application's Search) rank
// every query alike, with the same scores, and that the lexical stages
// read the index's own terms: a candidate holding a query word gets a
// positive TF-IDF score.
func TestPlainIndexOnePath(t *testing.T) {
	ctx := context.Background()
	ds, err := dataset.Load("../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	ds.Candidates = nil // retrieve, as a search does
	idx := plainIndex(t, ds)
	p := plainPipeline(t, idx, 30)
	_, run, err := offline.RunDataset(ctx, idx, ds, p, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	wrapped := rerank.Wrap(idx, p)
	s := rerank.Searcher{Index: idx, Pipeline: p}
	positive := 0
	for _, q := range ds.Queries {
		scored, err := s.Search(ctx, rerank.Query{ID: q.ID, Text: q.FullText()}, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		bq, err := p.Query(q.FullText())
		if err != nil {
			t.Fatal(err)
		}
		res, err := wrapped.Search(bleve.NewSearchRequestOptions(bq, 10, 0, false))
		if err != nil {
			t.Fatal(err)
		}
		ranked := run.Ranking(q.ID)
		if len(res.Hits) != min(10, len(scored)) {
			t.Fatalf("query %s: Wrap gave %d hits, the Searcher %d", q.ID, len(res.Hits), len(scored))
		}
		for i, h := range res.Hits {
			if h.ID != scored[i].ID || h.Score != scored[i].Score {
				t.Fatalf("query %s, hit %d: Wrap %s %v, Searcher %s %v", q.ID, i+1, h.ID, h.Score, scored[i].ID, scored[i].Score)
			}
			if ranked[i].DocID != h.ID || ranked[i].Score != h.Score {
				t.Fatalf("query %s, hit %d: run %s %v, Wrap %s %v", q.ID, i+1, ranked[i].DocID, ranked[i].Score, h.ID, h.Score)
			}
		}
		for _, sc := range scored {
			if sc.StageScores != nil && sc.StageScores[0] > 0 {
				positive++
			}
		}
	}
	if positive == 0 {
		t.Fatal("no candidate got a positive TF-IDF score: the stages do not read the index's terms")
	}
}

// TestPlainIndexFieldErrors: a field no document holds is an error naming
// it and the fields the index has, not empty text.
func TestPlainIndexFieldErrors(t *testing.T) {
	ds, err := dataset.Load("../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	idx := plainIndex(t, ds)
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"text field", "fields: {title: subject, text: bdy}\nstages: [{type: tfidf}]", []string{"bdy", "body, subject"}},
		{"default fields", "stages: [{type: overlap}]", []string{"text, title", "body, subject"}},
		{"first stage field", "fields: {title: subject, text: body}\nfirst_stage: {fields: [subjct]}\nstages: [{type: tfidf}]", []string{"first_stage.fields", "subjct"}},
		{"query boost", "fields: {title: subject, text: body}\nfirst_stage: {query_boost: tfidf}\nstages: [{type: tfidf}]", []string{"query_boost"}},
	} {
		cfg, err := rerank.ParseConfig([]byte(tc.doc))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, err = cfg.Build(rerank.EnvOf(idx))
		if err == nil {
			t.Errorf("%s: built", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, w)
			}
		}
	}
}

// TestPlainIndexFirstStage: without first_stage settings, a search from
// text over a plain index is the match query a Bleve application sends
// (the mapping's default field); with first_stage.fields, the named
// fields only.
func TestPlainIndexFirstStage(t *testing.T) {
	ctx := context.Background()
	ds, err := dataset.Load("../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	idx := plainIndex(t, ds)
	text := ds.Queries[0].FullText()
	p := plainPipeline(t, idx, 10)
	q, err := p.Query(text)
	if err != nil {
		t.Fatal(err)
	}
	got, err := idx.SearchInContext(ctx, bleve.NewSearchRequest(q))
	if err != nil {
		t.Fatal(err)
	}
	want, err := idx.SearchInContext(ctx, bleve.NewSearchRequest(bleve.NewMatchQuery(text)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != want.Total || got.Total == 0 {
		t.Fatalf("first stage matched %d documents, a match query %d", got.Total, want.Total)
	}
	cfg, err := rerank.ParseConfig([]byte("fields: {title: subject, text: body}\nfirst_stage: {fields: [subject]}\nstages: [{type: overlap}]"))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := cfg.Build(rerank.EnvOf(idx))
	if err != nil {
		t.Fatal(err)
	}
	if q, err = ps.Query(text); err != nil {
		t.Fatal(err)
	}
	subj := bleve.NewMatchQuery(text)
	subj.SetField("subject")
	got, _ = idx.SearchInContext(ctx, bleve.NewSearchRequest(q))
	want, _ = idx.SearchInContext(ctx, bleve.NewSearchRequest(subj))
	if got.Total != want.Total {
		t.Fatalf("first_stage.fields [subject] matched %d documents, a match on subject %d", got.Total, want.Total)
	}
	if _, err := ps.Query("the and of"); err == nil {
		t.Error("a query of stop words has searchable terms")
	}
}

// TestFirstStageRunOnGivenCandidates: a given list is scored by the first
// stage, matching documents by score, the others after in the given order.
func TestFirstStageRunOnGivenCandidates(t *testing.T) {
	corpus := []dataset.Doc{
		{ID: "d1", Title: "Good bank in Doha", Text: "Which bank is best for an expat salary account?"},
		{ID: "d2", Title: "Driving licence", Text: "How do I convert my driving licence in Qatar?"},
		{ID: "d3", Title: "Bank loans", Text: "Personal loan from a bank after work termination"},
		{ID: "d4", Title: "Weekend trips", Text: "Where to go camping in the desert this weekend"},
	}
	idx := newIndex(t, corpus)
	run := dataset.NewRun()
	for i, id := range []string{"d2", "d4", "d1", "d3"} {
		run.Add("q", dataset.Entry{DocID: id, Rank: i + 1, Score: 1 / float64(i+1)})
	}
	ds := &dataset.Dataset{Corpus: corpus, Queries: []dataset.Query{{ID: "q", Text: "bank loan"}}, Candidates: &run}
	got, err := offline.FirstStageRun(context.Background(), idx, ds, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, e := range got.Sorted("q") {
		order = append(order, e.DocID)
	}
	if want := "d3 d1 d2 d4"; strings.Join(order, " ") != want {
		t.Errorf("order = %v, want %s", order, want)
	}
}
