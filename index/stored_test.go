package index

import (
	"context"
	"maps"
	"reflect"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	bindex "github.com/blevesearch/bleve_index_api"
)

// TestStoredReader: every hit of a search over the demo corpus (written
// in batches, with deletions and rewrites) gets from storedReader the
// fields Bleve's loader gives it, all of them or those asked for; a hit
// whose number is another document's, one without a number, and a
// document holding a number field are left to Bleve's loader.
func TestStoredReader(t *testing.T) {
	idx, _ := splitIndex(t, bindex.TFIDFScoring)
	res, err := idx.Search(bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 1000, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) < 100 {
		t.Fatalf("%d hits", len(res.Hits))
	}
	r, err := Reader(idx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, fields := range [][]string{{"*"}, {"title"}, {"text", "title"}} {
		s := newStoredReader(r, fields)
		if s == nil {
			t.Fatal("no stored reader over a scorch snapshot")
		}
		for _, h := range res.Hits {
			got := &search.DocumentMatch{ID: h.ID, IndexInternalID: h.IndexInternalID}
			if !s.load(got) {
				t.Fatalf("%v: %s not read", fields, h.ID)
			}
			want := &search.DocumentMatch{ID: h.ID}
			if err, _ := bleve.LoadAndHighlightAllFields(want, &bleve.SearchRequest{Fields: fields}, "", r, nil); err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(got.Fields, want.Fields, func(a, b any) bool { return reflect.DeepEqual(a, b) }) {
				t.Fatalf("%v: %s: %v, want %v", fields, h.ID, got.Fields, want.Fields)
			}
		}
	}
	s := newStoredReader(r, []string{"*"})
	a, b := res.Hits[0], res.Hits[1]
	for name, h := range map[string]*search.DocumentMatch{
		"another's number": {ID: a.ID, IndexInternalID: b.IndexInternalID},
		"no number":        {ID: a.ID},
	} {
		if s.load(h) || h.Fields != nil {
			t.Errorf("%s: read %v", name, h.Fields)
		}
	}

	mixed, err := bleve.NewMemOnly(bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	defer mixed.Close()
	if err := mixed.Index("d", map[string]any{"title": "water", "year": 1963.0}); err != nil {
		t.Fatal(err)
	}
	res, err = mixed.SearchInContext(context.Background(), bleve.NewSearchRequest(bleve.NewMatchQuery("water")))
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("%v, %v", res, err)
	}
	mr, err := Reader(mixed)
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	h := &search.DocumentMatch{ID: "d", IndexInternalID: res.Hits[0].IndexInternalID}
	if newStoredReader(mr, []string{"*"}).load(h) || h.Fields != nil {
		t.Errorf("a number field: read %v", h.Fields)
	}
	if err := FetchFields(context.Background(), mixed, []string{"*"}, search.DocumentMatchCollection{h}); err != nil {
		t.Fatal(err)
	}
	if h.Fields["year"] != 1963.0 || h.Fields["title"] != "water" {
		t.Errorf("FetchFields: %v", h.Fields)
	}
}
