package rerank_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/rerank"
)

// TestWrapCursorPages: SearchAfter and SearchBefore pages of a request
// sorted by score page through the reranked list, as From/Size pages do,
// below the rerank window too, and through an IndexAlias (which asks its
// children for a SearchBefore page as a SearchAfter page by ascending
// score).
func TestWrapCursorPages(t *testing.T) {
	p := shortFirst()
	p.Window = 5
	idx := newIndex(t, docs("d", 30))
	other := newIndex(t, []eval.Doc{{ID: "x", Text: "nothing to match"}})
	for _, tc := range []struct {
		name string
		idx  bleve.Index
	}{
		{"wrapped index", rerank.Wrap(idx, p)},
		{"alias of a wrapped index", bleve.NewIndexAlias(rerank.Wrap(idx, p), rerank.Wrap(other, p))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			find := func(size int, after, before []string) *bleve.SearchResult {
				t.Helper()
				req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), size, 0, false)
				req.SearchAfter, req.SearchBefore = after, before
				res, err := tc.idx.Search(req)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			full := find(30, nil, nil)
			all := ids(full.Hits)
			if fmt.Sprint(all) == fmt.Sprint(firstStage(t, idx)) {
				t.Fatal("reranking did not change the order")
			}
			key := func(h *search.DocumentMatch) []string { return []string{strconv.FormatFloat(h.Score, 'g', -1, 64)} }
			// Forward from the first page, by SearchAfter.
			var got []string
			page := find(4, nil, nil)
			for len(page.Hits) > 0 {
				got = append(got, ids(page.Hits)...)
				page = find(4, key(page.Hits[len(page.Hits)-1]), nil)
			}
			if fmt.Sprint(got) != fmt.Sprint(all) {
				t.Errorf("SearchAfter pages %v\n  != the list %v", got, all)
			}
			// Back from the last hit, by SearchBefore.
			got = []string{all[len(all)-1]}
			page = find(4, nil, key(full.Hits[len(full.Hits)-1]))
			for len(page.Hits) > 0 {
				got = append(ids(page.Hits), got...)
				page = find(4, nil, key(page.Hits[0]))
			}
			if fmt.Sprint(got) != fmt.Sprint(all) {
				t.Errorf("SearchBefore pages %v\n  != the list %v", got, all)
			}
			// Straight to a cursor deep below the window.
			if got := ids(find(3, key(full.Hits[20]), nil).Hits); fmt.Sprint(got) != fmt.Sprint(all[21:24]) {
				t.Errorf("after hit 21: %v, want %v", got, all[21:24])
			}
			if got := ids(find(3, nil, key(full.Hits[20])).Hits); fmt.Sprint(got) != fmt.Sprint(all[17:20]) {
				t.Errorf("before hit 21: %v, want %v", got, all[17:20])
			}
		})
	}
}

// TestWrapCursorAscending: a SearchAfter page by ascending score is the
// reranked list's page above the cursor, in ascending order; other sorts
// with a cursor pass through to the first stage.
func TestWrapCursorAscending(t *testing.T) {
	p := shortFirst()
	p.Window = 5
	idx := newIndex(t, docs("d", 12))
	w := rerank.Wrap(idx, p)
	full, err := w.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 12, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	all := ids(full.Hits)
	req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 3, 0, false)
	req.SortBy([]string{"_score"})
	req.SearchAfter = []string{strconv.FormatFloat(full.Hits[8].Score, 'g', -1, 64)}
	res, err := w.Search(req)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(all[5:8])
	slices.Reverse(want)
	if fmt.Sprint(ids(res.Hits)) != fmt.Sprint(want) {
		t.Errorf("ascending after hit 9: %v, want %v", ids(res.Hits), want)
	}

	req = bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 3, 0, false)
	req.SortBy([]string{"-_score", "_id"})
	req.SearchAfter = []string{strconv.FormatFloat(full.Hits[8].Score, 'g', -1, 64), full.Hits[8].ID}
	got, err := w.Search(req)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := idx.Search(req)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids(got.Hits)) != fmt.Sprint(ids(plain.Hits)) {
		t.Errorf("sorted by score and id: %v, want the first stage's %v", ids(got.Hits), ids(plain.Hits))
	}
}

func firstStage(t *testing.T, idx bleve.Index) []string {
	t.Helper()
	res, err := idx.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 30, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	return ids(res.Hits)
}
