package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/blevesearch/bleve/v2"
)

// TestServePlainIndex: a Bleve index semrank did not build is served for
// searching, reranked over the fields its pipeline names, its documents
// read back through /api/doc; writes are refused, since the application
// that built the index writes it.
func TestServePlainIndex(t *testing.T) {
	_, ds := demoIndex(t)
	plain, err := bleve.NewMemOnly(bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	b := plain.NewBatch()
	for _, d := range ds.Corpus {
		if err := b.Index(d.ID, map[string]any{"subject": d.Title, "body": d.Text}); err != nil {
			t.Fatal(err)
		}
	}
	if err := plain.Batch(b); err != nil {
		t.Fatal(err)
	}
	path := writePipeline(t, t.TempDir(), "window: 30\nfields: {title: subject, text: body}\nstages: [{type: tfidf}, {type: overlap}]\n")
	s, err := New(Config{Index: plain, PipelinePath: path, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	ts := hs.URL
	var res SearchResponse
	if code := call(t, "POST", ts+"/api/search", map[string]any{"query": "best bank in Doha", "fields": []string{"subject"}}, &res); code != http.StatusOK {
		t.Fatalf("search: status %d", code)
	}
	if !res.Reranked || len(res.Hits) == 0 || res.Hits[0].Fields["subject"] == nil || res.Hits[0].StageScores["tfidf"] <= 0 {
		t.Fatalf("search over the plain index: %+v", res)
	}
	var doc DocResponse
	if code := call(t, "GET", ts+"/api/doc/"+res.Hits[0].ID, nil, &doc); code != http.StatusOK || doc.Title == "" || doc.Metadata["subject"] != doc.Title {
		t.Errorf("/api/doc: status %d, %+v", code, doc)
	}
	if code := call(t, "GET", ts+"/api/doc/no-such-doc", nil, nil); code != http.StatusNotFound {
		t.Errorf("/api/doc of a missing document: status %d", code)
	}
	if code := call(t, "POST", ts+"/api/index", map[string]any{"add": []any{}}, nil); code != http.StatusForbidden {
		t.Errorf("/api/index: status %d, want 403", code)
	}
}
