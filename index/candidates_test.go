package index

import (
	"context"
	"math"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
)

// TestHitsFromStable checks that hits whose Bleve scores differ only in
// the last bits (as two builds of one index produce) come out with the
// same scores and in ID order, whatever order Bleve returned them in.
func TestHitsFromStable(t *testing.T) {
	base := 7.123456789
	up := math.Nextafter(base, 10)
	tests := []struct {
		name string
		in   []*search.DocumentMatch
		want []string
	}{
		{"near tie, Bleve order b a", []*search.DocumentMatch{{ID: "b", Score: up}, {ID: "a", Score: base}, {ID: "c", Score: 1}}, []string{"a", "b", "c"}},
		{"near tie, Bleve order a b", []*search.DocumentMatch{{ID: "a", Score: up}, {ID: "b", Score: base}, {ID: "c", Score: 1}}, []string{"a", "b", "c"}},
		{"clear order kept", []*search.DocumentMatch{{ID: "z", Score: 3}, {ID: "y", Score: 2}, {ID: "x", Score: 1}}, []string{"z", "y", "x"}},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := HitsFrom(tt.in)
			if len(hits) != len(tt.want) {
				t.Fatalf("%d hits, want %d", len(hits), len(tt.want))
			}
			for i, h := range hits {
				if h.ID != tt.want[i] || h.Rank != i+1 {
					t.Fatalf("hit %d = %s rank %d, want %s rank %d", i, h.ID, h.Rank, tt.want[i], i+1)
				}
				if h.Score != StableScore(h.Score) {
					t.Fatalf("hit %s score %v is not rounded", h.ID, h.Score)
				}
			}
			if len(hits) > 1 && tt.in[0].Score == up && hits[0].Score != hits[1].Score {
				t.Fatalf("scores %v and %v one ulp apart still differ", hits[0].Score, hits[1].Score)
			}
		})
	}
}

// TestFetchFields: each hit gets the stored fields of the document its
// search found, over an IndexAlias whose children hold documents with
// the same ids too (it returns one document per child holding an id, so
// a search for as many hits as ids left some out, and a hit could get the
// other child's copy); a hit whose document is gone gets none.
func TestFetchFields(t *testing.T) {
	child := func(name string) bleve.Index {
		idx, err := bleve.NewMemOnly(bleve.NewIndexMapping())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { idx.Close() })
		idx.SetName(name)
		for _, id := range []string{"a", "b", "c"} {
			if err := idx.Index(id, map[string]any{"title": name + " " + id, "n": 1.0}); err != nil {
				t.Fatal(err)
			}
		}
		return idx
	}
	one, two := child("one"), child("two")
	alias := bleve.NewIndexAlias(one, two)
	type hit struct{ index, id string }
	for _, tc := range []struct {
		name   string
		idx    bleve.Index
		fields []string
		hits   []hit
		want   []any // each hit's title; nil for none
		n      int   // fields of a hit with a title
	}{
		{"one index", one, []string{"title"}, []hit{{"one", "c"}, {"one", "a"}}, []any{"one c", "one a"}, 1},
		{"every field", one, []string{"*"}, []hit{{"one", "b"}}, []any{"one b"}, 2},
		{"deleted", one, []string{"title"}, []hit{{"one", "a"}, {"one", "gone"}}, []any{"one a", nil}, 1},
		{"alias, the first child's hits", alias, []string{"title"}, []hit{{"one", "a"}, {"one", "b"}, {"one", "c"}}, []any{"one a", "one b", "one c"}, 1},
		{"alias, the second child's hits", alias, []string{"title"}, []hit{{"two", "a"}, {"two", "b"}, {"two", "c"}}, []any{"two a", "two b", "two c"}, 1},
		{"alias, both copies", alias, []string{"title"}, []hit{{"two", "b"}, {"one", "b"}}, []any{"two b", "one b"}, 1},
		{"alias, one hit", alias, []string{"title"}, []hit{{"two", "c"}}, []any{"two c"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits := make(search.DocumentMatchCollection, len(tc.hits))
			for i, h := range tc.hits {
				hits[i] = &search.DocumentMatch{ID: h.id, Index: h.index}
			}
			if err := FetchFields(context.Background(), tc.idx, tc.fields, hits); err != nil {
				t.Fatal(err)
			}
			for i, h := range hits {
				if got := h.Fields["title"]; got != tc.want[i] {
					t.Errorf("hit %s of %s: title %v, want %v", h.ID, h.Index, got, tc.want[i])
				}
				if tc.want[i] != nil && len(h.Fields) != tc.n || tc.want[i] == nil && h.Fields != nil {
					t.Errorf("hit %s of %s: fields %v, asked for %v", h.ID, h.Index, h.Fields, tc.fields)
				}
			}
		})
	}
}
