package rerank_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// bleveIndex lets fieldCounter embed bleve.Index (see rerank's base).
type bleveIndex = bleve.Index

// fieldCounter counts the hits its searches return with stored fields
// loaded: what a deep page costs beyond collecting its hits.
type fieldCounter struct {
	bleveIndex
	mu     sync.Mutex
	loaded int
}

func (c *fieldCounter) Search(req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	return c.SearchInContext(context.Background(), req)
}

func (c *fieldCounter) SearchInContext(ctx context.Context, req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	res, err := c.bleveIndex.SearchInContext(ctx, req)
	if err == nil && len(req.Fields) > 0 {
		c.mu.Lock()
		c.loaded += len(res.Hits)
		c.mu.Unlock()
	}
	return res, err
}

func (c *fieldCounter) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.loaded
	c.loaded = 0
	return n
}

// TestWrapDeepPageFields: a page past the rerank window returns the hits,
// scores and stored fields the whole list has there, while loading the
// fields of the window (which the stages read) and of the page only, not
// of every hit above the page; the first-stage list of WithoutRerank the
// same, with the page's fields only.
func TestWrapDeepPageFields(t *testing.T) {
	const window = 10
	p := shortFirst()
	p.Window = window
	c := &fieldCounter{bleveIndex: newIndex(t, docs("d", 60))}
	w := rerank.Wrap(c, p)
	search := func(ctx context.Context, from, size int, fields []string) *bleve.SearchResult {
		t.Helper()
		req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), size, from, false)
		req.Fields = fields
		res, err := w.SearchInContext(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, tc := range []struct {
		name       string
		noRerank   bool
		from, size int
		fields     []string
		maxLoaded  int // hits loaded with fields, at most
	}{
		{"within the window", false, 2, 5, []string{"title"}, window + 1},
		{"across the window's edge", false, 6, 10, []string{"text"}, 16 + 1},
		{"past the window, one field", false, 25, 5, []string{"title"}, window + 5},
		{"past the window, every field", false, 25, 5, []string{"*"}, window + 5},
		{"past the window, no fields", false, 25, 5, nil, window},
		{"running off the list", false, 55, 10, []string{"text", "title"}, window + 5},
		{"past the list", false, 70, 5, []string{"title"}, window},
		{"first stage, past the window", true, 25, 5, []string{"title"}, 5},
		{"first stage, no fields", true, 25, 5, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.noRerank {
				ctx = rerank.WithoutRerank(ctx)
			}
			full := search(ctx, 0, 100, tc.fields)
			c.take()
			got := search(ctx, tc.from, tc.size, tc.fields)
			if n := c.take(); n > tc.maxLoaded {
				t.Errorf("loaded the fields of %d hits, want at most %d", n, tc.maxLoaded)
			}
			want := full.Hits[min(tc.from, len(full.Hits)):min(tc.from+tc.size, len(full.Hits))]
			if len(got.Hits) != len(want) {
				t.Fatalf("%d hits, want %d", len(got.Hits), len(want))
			}
			for i, h := range got.Hits {
				if h.ID != want[i].ID || h.Score != want[i].Score || !reflect.DeepEqual(h.Fields, want[i].Fields) {
					t.Errorf("hit %d: %s %g %v, want %s %g %v", tc.from+i, h.ID, h.Score, h.Fields, want[i].ID, want[i].Score, want[i].Fields)
				}
				if len(tc.fields) > 0 && len(h.Fields) == 0 {
					t.Errorf("hit %d (%s) has no fields", tc.from+i, h.ID)
				}
			}
		})
	}
	t.Run("cursor page past the window", func(t *testing.T) {
		fields := []string{"title", "text"}
		full := search(context.Background(), 0, 100, fields)
		for _, at := range []int{3, 9, 30} {
			req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 4, 0, false)
			req.Fields = fields
			req.SortBy([]string{"-_score"})
			req.SearchAfter = []string{strconv.FormatFloat(full.Hits[at].Score, 'g', -1, 64)}
			res, err := w.Search(req)
			if err != nil {
				t.Fatal(err)
			}
			want := full.Hits[at+1 : at+5]
			if fmt.Sprint(ids(res.Hits)) != fmt.Sprint(ids(want)) {
				t.Fatalf("after hit %d: %v, want %v", at, ids(res.Hits), ids(want))
			}
			for i, h := range res.Hits {
				if !reflect.DeepEqual(h.Fields, want[i].Fields) || len(h.Fields) != 2 {
					t.Errorf("after hit %d, hit %s: fields %v, want %v", at, h.ID, h.Fields, want[i].Fields)
				}
			}
		}
	})
	// A wrapped alias: its children may hold documents with the same
	// ids (the alias then returns each copy), which the fields fetched
	// after the search must find, each hit its own child's: a hit of the
	// window without fields would be reranked as an empty document. The
	// documents score apart: an alias orders hits of different children
	// that tie in score as they arrive, which varies from search to
	// search, and past the window the list keeps the alias's order.
	var all []dataset.Doc
	for i := range 60 {
		all = append(all, dataset.Doc{ID: fmt.Sprintf("d%02d", i), Title: "bank account", Text: "bank " + strings.Repeat("money ", i+1)})
	}
	for _, tc := range []struct {
		name     string
		one, two []dataset.Doc
	}{
		{"wrapped alias", all[:30], all[30:]},
		{"wrapped alias, children sharing ids", all[:40], append(slices.Clone(all[1:10]), all[40:]...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := rerank.Wrap(bleve.NewIndexAlias(newIndex(t, tc.one), newIndex(t, tc.two)), p)
			page := func(from, size int) *bleve.SearchResult {
				req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), size, from, false)
				req.Fields = []string{"title", "text"}
				res, err := a.Search(req)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			full := page(0, 100)
			for _, from := range []int{12, 40} {
				got, want := page(from, 8).Hits, full.Hits[from:from+8]
				if len(got) != len(want) {
					t.Fatalf("from %d: %d hits, want %d", from, len(got), len(want))
				}
				for i, h := range got {
					if h.ID != want[i].ID || h.Score != want[i].Score || !reflect.DeepEqual(h.Fields, want[i].Fields) || len(h.Fields) != 2 {
						t.Errorf("hit %d: %s %g %v, want %s %g %v", from+i, h.ID, h.Score, h.Fields, want[i].ID, want[i].Score, want[i].Fields)
					}
				}
			}
		})
	}
}

// TestWrapPagesAsTheList: every page, From/Size or cursor, inside the
// window, across its edge or past it, holds the hits of one request for
// the whole list at its places, with the same scores, fields (those
// Bleve returns for the hit: none for a field the document does not
// store), explanations, sort values, hit numbers, total and max score,
// reranked or not.
func TestWrapPagesAsTheList(t *testing.T) {
	// The list's top six tie: the window orders them by id, Bleve by its
	// internal document numbers, which follow the order the index's
	// workers happened to analyze them in (rarely the ids' order: 1 in
	// 720). No tie crosses the window's edge (hits 9 and 10 differ),
	// where index.SearchTiesByID would order the whole window by id.
	var ds []dataset.Doc
	for i := range 6 {
		ds = append(ds, dataset.Doc{ID: fmt.Sprintf("a%d", 5-i), Title: "bank", Text: "bank bank bank"})
	}
	idx := newIndex(t, append(ds, docs("d", 60)...))
	p := shortFirst()
	p.Window = 9
	w := rerank.Wrap(idx, p)
	for _, tc := range []struct {
		name     string
		noRerank bool
		explain  bool
		fields   []string
		sortBy   []string
	}{
		{"plain", false, false, nil, nil},
		{"explained", false, true, []string{"title"}, nil},
		{"every field", false, false, []string{"*"}, []string{"-_score"}},
		{"one field", false, false, []string{"text"}, []string{"-_score"}},
		{"a field not stored", false, false, []string{"nope"}, []string{"-_score"}},
		{"a field not stored and one stored", false, true, []string{"nope", "title"}, []string{"-_score", "_id"}},
		{"a field not stored, by score then id", false, false, []string{"nope"}, []string{"-_score", "_id"}},
		{"no fields, by score then id", false, true, nil, []string{"-_score", "_id"}},
		{"first stage", true, true, []string{"title"}, nil},
		{"first stage, a field not stored", true, false, []string{"nope"}, []string{"-_score"}},
		{"first stage, every field", true, false, []string{"*"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.noRerank {
				ctx = rerank.WithoutRerank(ctx)
			}
			find := func(from, size int, after, before []string) *bleve.SearchResult {
				t.Helper()
				req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), size, from, tc.explain)
				req.Fields = tc.fields
				if tc.sortBy != nil {
					req.SortBy(tc.sortBy)
				}
				req.SearchAfter, req.SearchBefore = after, before
				res, err := w.SearchInContext(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			full := find(0, 100, nil, nil)
			plain := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 100, 0, false)
			plain.Fields = tc.fields
			stored, err := idx.Search(plain)
			if err != nil {
				t.Fatal(err)
			}
			bleveFields := map[string]map[string]any{}
			for _, h := range stored.Hits {
				bleveFields[h.ID] = h.Fields
			}
			for _, h := range full.Hits {
				if !reflect.DeepEqual(h.Fields, bleveFields[h.ID]) {
					t.Errorf("whole list, hit %s: fields %#v, Bleve's %#v", h.ID, h.Fields, bleveFields[h.ID])
				}
			}
			check := func(page string, got *bleve.SearchResult, want []*search.DocumentMatch) {
				t.Helper()
				if d := diffHits(got.Hits, want); d != "" {
					t.Errorf("%s: %s", page, d)
				}
				if got.Total != full.Total || got.MaxScore != full.MaxScore {
					t.Errorf("%s: total %d, max score %v; the whole list's %d, %v", page, got.Total, got.MaxScore, full.Total, full.MaxScore)
				}
			}
			// The detailed result's first-stage list holds the page's
			// first-stage hits with their fields: semrank's server shows
			// them (compare).
			withTitle := slices.Contains(tc.fields, "title") || slices.Contains(tc.fields, "*")
			for _, pg := range []struct{ from, size int }{{1, 1}, {2, 5}, {8, 5}, {11, 3}, {25, 5}, {61, 5}, {70, 5}} {
				page := fmt.Sprintf("from %d size %d", pg.from, pg.size)
				check(page, find(pg.from, pg.size, nil, nil), full.Hits[min(pg.from, len(full.Hits)):min(pg.from+pg.size, len(full.Hits))])
				req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), pg.size, pg.from, false)
				req.Fields = tc.fields
				detailed, err := w.SearchDetailed(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				var titled []bool
				for _, f := range detailed.First {
					titled = append(titled, f.Fields["title"] != nil)
				}
				for i := pg.from; withTitle && i < min(pg.from+pg.size, len(titled)); i++ {
					if !titled[i] {
						t.Errorf("%s: FirstStage saw hit %d without its title", page, i)
					}
				}
			}
			if tc.noRerank || tc.sortBy == nil {
				return // WithoutRerank leaves cursor pages to Bleve
			}
			for _, at := range []int{3, 9, 30} {
				key := []string{strconv.FormatFloat(full.Hits[at].Score, 'g', -1, 64)}
				if len(tc.sortBy) == 2 {
					key = append(key, full.Hits[at].ID)
				}
				check(fmt.Sprintf("4 after hit %d", at), find(0, 4, key, nil), full.Hits[at+1:at+5])
				check(fmt.Sprintf("4 before hit %d", at), find(0, 4, nil, key), full.Hits[max(0, at-4):at])
			}
		})
	}
}

// diffHits says how got differs from want, the hits of another search,
// or returns "".
func diffHits(got, want []*search.DocumentMatch) string {
	if len(got) != len(want) {
		return fmt.Sprintf("hits %v, want %v", ids(got), ids(want))
	}
	for i, g := range got {
		w := want[i]
		switch {
		case g.ID != w.ID || g.Score != w.Score:
			return fmt.Sprintf("hit %d: %s %v, want %s %v", i, g.ID, g.Score, w.ID, w.Score)
		case !reflect.DeepEqual(g.Fields, w.Fields):
			return fmt.Sprintf("hit %d (%s): fields %#v, want %#v", i, g.ID, g.Fields, w.Fields)
		case !reflect.DeepEqual(g.Expl, w.Expl):
			return fmt.Sprintf("hit %d (%s): explanation\n%v\nwant\n%v", i, g.ID, g.Expl, w.Expl)
		case !reflect.DeepEqual(g.Sort, w.Sort) || !reflect.DeepEqual(g.DecodedSort, w.DecodedSort):
			return fmt.Sprintf("hit %d (%s): sort values %q %q, want %q %q", i, g.ID, g.Sort, g.DecodedSort, w.Sort, w.DecodedSort)
		case g.HitNumber != w.HitNumber:
			return fmt.Sprintf("hit %d (%s): hit number %#x, want %#x", i, g.ID, g.HitNumber, w.HitNumber)
		}
	}
	return ""
}
