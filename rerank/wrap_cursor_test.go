package rerank_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"

	"github.com/semrank/semrank/dataset"
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
	other := newIndex(t, []dataset.Doc{{ID: "x", Text: "nothing to match"}})
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
// reranked list's page above the cursor, in ascending order; a sort by
// score then _id pages the reranked list as the score alone does (its
// scores are distinct), and carries the id in each hit's sort values.
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
	if fmt.Sprint(ids(got.Hits)) != fmt.Sprint(all[9:12]) {
		t.Errorf("sorted by score and id, after hit 9: %v, want %v", ids(got.Hits), all[9:12])
	}
	for _, h := range got.Hits {
		if fmt.Sprint(h.Sort) != fmt.Sprint([]string{"_score", h.ID}) {
			t.Errorf("hit %s has sort values %q, want [_score %s]", h.ID, h.Sort, h.ID)
		}
	}
}

// TestAliasCursorPagesByScoreAndID: through an IndexAlias of wrapped
// children whose hits tie across children (rrf scores the hits at one
// place in each child's list alike), cursor pages by score alone skip
// the hits tied with the cursor's in the other children; by score then
// _id, as Bleve advises for a total order, they page the merged list
// whole, forward and back.
func TestAliasCursorPagesByScoreAndID(t *testing.T) {
	a, b := shards(docs("d", 40))
	p := &rerank.Pipeline{Window: 10, Stages: []rerank.Stage{lengthStage{}}, Fusion: &rerank.RRF{}}
	ia, ib := newIndex(t, a), newIndex(t, b)
	alias := bleve.NewIndexAlias(rerank.Wrap(ia, p), rerank.Wrap(ib, p))
	sorted := func(idx bleve.Index, size int, after, before []string) []*search.DocumentMatch {
		t.Helper()
		req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), size, 0, false)
		req.SortBy([]string{"-_score", "_id"})
		req.SearchAfter, req.SearchBefore = after, before
		res, err := idx.Search(req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Hits
	}
	find := func(size int, after, before []string) []*search.DocumentMatch {
		t.Helper()
		return sorted(alias, size, after, before)
	}
	full := find(40, nil, nil)
	all := ids(full)
	if len(all) != 40 {
		t.Fatalf("%d hits, want 40", len(all))
	}
	if plain := ids(sorted(bleve.NewIndexAlias(ia, ib), 40, nil, nil)); fmt.Sprint(all) == fmt.Sprint(plain) {
		t.Fatal("a sort by score then _id was not reranked")
	}
	key := func(h *search.DocumentMatch) []string {
		return []string{strconv.FormatFloat(h.Score, 'g', -1, 64), h.ID}
	}
	for _, size := range []int{1, 3, 4} {
		var got []string
		for page := find(size, nil, nil); len(page) > 0; page = find(size, key(page[len(page)-1]), nil) {
			got = append(got, ids(page)...)
		}
		if fmt.Sprint(got) != fmt.Sprint(all) {
			t.Errorf("SearchAfter pages of %d: %v\n  != the list %v", size, got, all)
		}
		got = []string{all[len(all)-1]}
		for page := find(size, nil, key(full[len(full)-1])); len(page) > 0; page = find(size, nil, key(page[0])) {
			got = append(ids(page), got...)
		}
		if fmt.Sprint(got) != fmt.Sprint(all) {
			t.Errorf("SearchBefore pages of %d: %v\n  != the list %v", size, got, all)
		}
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

// TestWrapSortValuesAsBleve: each hit carries the sort values Bleve gives
// it for the request's sort: a score sort's (Bleve's "_score", with no
// decoded values), and a sort by score then _id's, reranked or not.
func TestWrapSortValuesAsBleve(t *testing.T) {
	idx := newIndex(t, docs("d", 12))
	p := shortFirst()
	p.Window = 5
	w := rerank.Wrap(idx, p)
	for _, sortBy := range [][]string{nil, {"-_score"}, {"-_score", "_id"}, {"-_score", "-_id"}} {
		for _, ctx := range []context.Context{context.Background(), rerank.WithoutRerank(context.Background())} {
			search := func(ix bleve.Index) map[string]string {
				t.Helper()
				req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 12, 0, false)
				if sortBy != nil {
					req.SortBy(sortBy)
				}
				res, err := ix.SearchInContext(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				out := map[string]string{}
				for _, h := range res.Hits {
					out[h.ID] = fmt.Sprintf("sort %q decoded %q", h.Sort, h.DecodedSort)
				}
				return out
			}
			got, want := search(w), search(idx)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("sort %v: hits' sort values %v\n  want Bleve's %v", sortBy, got, want)
			}
		}
	}
}

// TestWrapWithoutRerankByScoreAndID: a WithoutRerank search sorted by
// score then _id is Bleve's own, as its cursor pages are: its tied hits
// come by id, whatever the window, and its cursor pages, from its first
// page on, follow its From/Size pages, through an IndexAlias too.
func TestWrapWithoutRerankByScoreAndID(t *testing.T) {
	var ds []dataset.Doc // hits tie in groups of 5
	for i := 0; i < 20; i++ {
		ds = append(ds, dataset.Doc{ID: fmt.Sprintf("t%02d", (i*7)%20), Title: "bank", Text: "bank " + strings.Repeat("money ", i%4+1)})
	}
	p := shortFirst()
	p.Window = 3
	a, b := shards(ds)
	one := newIndex(t, ds)
	ia, ib := newIndex(t, a), newIndex(t, b)
	ctx := rerank.WithoutRerank(context.Background())
	for _, tc := range []struct {
		name          string
		wrapped, bare bleve.Index
	}{
		{"wrapped index", rerank.Wrap(one, p), one},
		{"alias of wrapped indexes", bleve.NewIndexAlias(rerank.Wrap(ia, p), rerank.Wrap(ib, p)), bleve.NewIndexAlias(ia, ib)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			find := func(ix bleve.Index, size, from int, after []string) []*search.DocumentMatch {
				t.Helper()
				req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank money"), size, from, false)
				req.SortBy([]string{"-_score", "_id"})
				req.SearchAfter = after
				res, err := ix.SearchInContext(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				return res.Hits
			}
			full := find(tc.wrapped, 20, 0, nil)
			if got, want := ids(full), ids(find(tc.bare, 20, 0, nil)); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("the list %v\n  want Bleve's %v", got, want)
			}
			for size := 1; size <= 5; size++ {
				var paged, cursored []string
				for from := 0; from < 20; from += size {
					paged = append(paged, ids(find(tc.wrapped, size, from, nil))...)
				}
				page := find(tc.wrapped, size, 0, nil)
				for n := 0; len(page) > 0 && n < 25; n++ {
					cursored = append(cursored, ids(page)...)
					last := page[len(page)-1]
					page = find(tc.wrapped, size, 0, []string{strconv.FormatFloat(last.Score, 'g', -1, 64), last.ID})
				}
				if fmt.Sprint(paged) != fmt.Sprint(ids(full)) || fmt.Sprint(cursored) != fmt.Sprint(ids(full)) {
					t.Errorf("pages of %d: from/size %v\n  cursor %v\n  != the list %v", size, paged, cursored, ids(full))
				}
			}
		})
	}
}

// TestWrapCursorScoreNotANumber: a cursor whose score is not a number, such
// as the "_score" placeholder a hit's Sort holds, is refused with an error
// saying what to give instead. Bleve reads it as 0, a place in the middle of
// a reranked list (whose scores may be negative): a loop feeding each page's
// last Sort back as the cursor got the same page forever.
func TestWrapCursorScoreNotANumber(t *testing.T) {
	idx := newIndex(t, docs("d", 30))
	w := rerank.Wrap(idx, shortFirst())
	for _, tc := range []struct {
		name          string
		sort          []string
		after, before []string
	}{
		{"after, score sort", []string{"-_score"}, []string{"_score"}, nil},
		{"before, score sort", []string{"-_score"}, nil, []string{"_score"}},
		{"after, score then id", []string{"-_score", "_id"}, []string{"_score", "d03"}, nil},
		{"after, ascending", []string{"_score"}, []string{""}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 4, 0, false)
			req.SortBy(tc.sort)
			req.SearchAfter, req.SearchBefore = tc.after, tc.before
			res, err := w.Search(req)
			if err == nil {
				t.Fatalf("no error; hits %v", ids(res.Hits))
			}
			if !strings.Contains(err.Error(), "not a number") || !strings.Contains(err.Error(), "hit.Score") {
				t.Errorf("error %q does not say to give the hit's Score", err)
			}
		})
	}
	// Without reranking, the page is Bleve's own, as before.
	req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 4, 0, false)
	req.SearchAfter = []string{"_score"}
	if _, err := w.SearchInContext(rerank.WithoutRerank(context.Background()), req); err != nil {
		t.Errorf("WithoutRerank: %v", err)
	}
}
