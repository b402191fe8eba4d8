package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/semrank/semrank/dataset"
)

// splitIndex is the demo corpus in a Bleve index with the default
// mapping and the given scoring model, written in five batches, with 30
// documents deleted and 30 rewritten after, so that document numbers may
// have holes and segments follow each other, opened read-only.
func splitIndex(t testing.TB, scoring string) (bleve.Index, []dataset.Query) {
	t.Helper()
	ds, err := dataset.Load("../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	m := bleve.NewIndexMapping()
	m.ScoringModel = scoring
	path := t.TempDir() + "/plain"
	idx, err := bleve.New(path, m)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(ds.Corpus); i += 100 {
		indexDocs(t, idx, ds.Corpus[i:min(i+100, len(ds.Corpus))])
	}
	b := idx.NewBatch()
	for i, d := range ds.Corpus[:60] {
		if i%2 == 0 {
			b.Delete(d.ID)
		} else if err := b.Index(d.ID, map[string]any{"title": d.Title, "text": d.Text + " " + d.Title}); err != nil {
			t.Fatal(err)
		}
	}
	if err := idx.Batch(b); err != nil {
		t.Fatal(err)
	}
	// Read-only, so that no merge changes the statistics BM25 reads (the
	// documents deleted count until merged away) between two searches.
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	if idx, err = bleve.OpenUsing(path, map[string]any{"read_only": true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	return idx, ds.Queries
}

// indexDocs writes docs into idx in one batch, fields title and text.
func indexDocs(t testing.TB, idx bleve.Index, docs []dataset.Doc) {
	t.Helper()
	b := idx.NewBatch()
	for _, d := range docs {
		if err := b.Index(d.ID, map[string]any{"title": d.Title, "text": d.Text}); err != nil {
			t.Fatal(err)
		}
	}
	if err := idx.Batch(b); err != nil {
		t.Fatal(err)
	}
}

// splitting makes splitSearch split every search it may for the rest of
// the test: two processors, no least size, no term sums.
func splitting(t testing.TB) {
	procs := runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	least, sums := MinSplitPostings, SumTerms
	MinSplitPostings, SumTerms = 0, false
	t.Cleanup(func() {
		MinSplitPostings, SumTerms = least, sums
		runtime.GOMAXPROCS(procs)
	})
}

// unsplit answers req with Bleve's own search, and split with splitSearch,
// failing the test where it did not split.
func unsplit(t *testing.T, idx bleve.Index, req *bleve.SearchRequest) *bleve.SearchResult {
	t.Helper()
	res, err := idx.SearchInContext(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func split(t *testing.T, idx bleve.Index, req *bleve.SearchRequest) *bleve.SearchResult {
	t.Helper()
	res, did, err := splitSearch(context.Background(), idx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !did {
		t.Fatalf("%v: not split", req.Query)
	}
	return res
}

// sameHits fails the test unless got and want hold the same hits in the
// same order, scores compared as StableScore rounds them and hits of one
// rounded score compared as a set (their last bits, and so their order,
// depend on the searcher's path; see splitSearch). With cut, got and want
// are pages of longer lists, whose first and last groups of tied hits
// may hold different members of a group the page cuts: only their
// scores are compared.
func sameHits(t *testing.T, name string, got, want *bleve.SearchResult, cut bool) {
	t.Helper()
	if got.Total != want.Total || len(got.Hits) != len(want.Hits) {
		t.Fatalf("%s: %d hits of %d, want %d of %d", name, len(got.Hits), got.Total, len(want.Hits), want.Total)
	}
	if StableScore(got.MaxScore) != StableScore(want.MaxScore) {
		t.Errorf("%s: max score %v, want %v", name, got.MaxScore, want.MaxScore)
	}
	if (got.Request == nil) != (want.Request == nil) {
		t.Errorf("%s: request %v, want %v", name, got.Request, want.Request)
	}
	group := func(hs search.DocumentMatchCollection, i int) (float64, []string) {
		s := StableScore(hs[i].Score)
		var ids []string
		for j := i; j < len(hs) && StableScore(hs[j].Score) == s; j++ {
			ids = append(ids, hs[j].ID)
		}
		slices.Sort(ids)
		return s, ids
	}
	for i := 0; i < len(want.Hits); {
		ws, wids := group(want.Hits, i)
		gs, gids := group(got.Hits, i)
		edge := cut && (i == 0 || i+len(wids) == len(want.Hits))
		if gs != ws || len(gids) != len(wids) || !edge && !slices.Equal(gids, wids) {
			t.Fatalf("%s: hits %d on: %v at %v, want %v at %v", name, i, gids, gs, wids, ws)
		}
		i += len(wids)
	}
}

// TestSplitSearchAgreesWithBleve: over the demo corpus, with TF-IDF and
// BM25 scoring, every demo query as a match query and several other kinds
// of query find the same hits split as Bleve's one search finds, whole
// lists and pages from the top, and SearchTiesByID's cuts are the same.
func TestSplitSearchAgreesWithBleve(t *testing.T) {
	splitting(t)
	for _, scoring := range []string{bindex.TFIDFScoring, bindex.BM25Scoring} {
		idx, queries := splitIndex(t, scoring)
		qs := map[string]query.Query{}
		for _, q := range queries[:25] {
			qs["match "+q.ID] = bleve.NewMatchQuery(q.FullText())
		}
		fuzzy := bleve.NewMatchQuery("computr languag")
		fuzzy.Fuzziness = 1
		qs["fuzzy"] = fuzzy
		qs["phrase"] = bleve.NewMatchPhraseQuery("of the")
		qs["query string"] = bleve.NewQueryStringQuery("water -food +the")
		qs["conjunction"] = bleve.NewConjunctionQuery(bleve.NewMatchQuery("the"), bleve.NewMatchQuery("a"))
		qs["match all"] = bleve.NewMatchAllQuery()
		bq := bleve.NewBooleanQuery()
		bq.AddShould(bleve.NewMatchQuery("health water"))
		bq.AddMustNot(bleve.NewTermQuery("food"))
		qs["boolean"] = bq
		for name, q := range qs {
			name = scoring + " " + name
			all := bleve.NewSearchRequestOptions(q, 1000, 0, false)
			sameHits(t, name, split(t, idx, all), unsplit(t, idx, all), false)
			for _, size := range []int{1, 10, 100} {
				req := bleve.NewSearchRequestOptions(q, size, 0, false)
				sameHits(t, fmt.Sprintf("%s size %d", name, size), split(t, idx, req), unsplit(t, idx, req), true)
				page := bleve.NewSearchRequestOptions(q, size, 5, false)
				sameHits(t, fmt.Sprintf("%s from 5 size %d", name, size), split(t, idx, page), unsplit(t, idx, page), true)
			}
			ties := func(procs int) []Hit {
				was := runtime.GOMAXPROCS(procs)
				defer runtime.GOMAXPROCS(was)
				res, err := SearchTiesByID(context.Background(), idx, bleve.NewSearchRequestOptions(q, 20, 0, false), 20)
				if err != nil {
					t.Fatal(err)
				}
				return HitsFrom(res.Hits)
			}
			if got, want := ties(2), ties(1); !slices.EqualFunc(got, want, func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score }) {
				t.Fatalf("%s: SearchTiesByID split %v, want %v", name, got, want)
			}
		}
	}
}

// TestSplitSearchNotSplit: requests splitSearch leaves to Bleve's one
// goroutine (what their searches need is not safe to share, or not
// kept by score) are answered as Bleve answers them.
func TestSplitSearchNotSplit(t *testing.T) {
	splitting(t)
	idx, _ := splitIndex(t, bindex.TFIDFScoring)
	alias := bleve.NewIndexAlias(idx)
	q := func() *bleve.SearchRequest {
		return bleve.NewSearchRequestOptions(bleve.NewMatchQuery("water health"), 10, 0, false)
	}
	cases := []struct {
		name string
		idx  bleve.Index
		ctx  context.Context
		req  func() *bleve.SearchRequest
	}{
		{"facets", idx, nil, func() *bleve.SearchRequest {
			r := q()
			r.AddFacet("f", bleve.NewFacetRequest("title", 3))
			return r
		}},
		{"highlight", idx, nil, func() *bleve.SearchRequest { r := q(); r.Highlight = bleve.NewHighlight(); return r }},
		{"explain", idx, nil, func() *bleve.SearchRequest { r := q(); r.Explain = true; return r }},
		{"locations", idx, nil, func() *bleve.SearchRequest { r := q(); r.IncludeLocations = true; return r }},
		{"sort by id", idx, nil, func() *bleve.SearchRequest { r := q(); r.SortBy([]string{"_id"}); return r }},
		{"score none", idx, nil, func() *bleve.SearchRequest { r := q(); r.Score = bleve.ScoreNone; return r }},
		{"search after", idx, nil, func() *bleve.SearchRequest {
			r := q()
			r.SortBy([]string{"-_score", "_id"})
			r.SearchAfter = []string{"1", "a"}
			return r
		}},
		{"geo", idx, nil, func() *bleve.SearchRequest {
			return bleve.NewSearchRequest(bleve.NewGeoDistanceQuery(0, 0, "10km"))
		}},
		{"alias", alias, nil, q},
		{"term limit", idx, context.WithValue(context.Background(), search.MaxTermSearchersKey, 100), q},
	}
	for _, c := range cases {
		ctx := c.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		got, did, err := splitSearch(ctx, c.idx, c.req())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if did {
			t.Errorf("%s: split", c.name)
		}
		want, err := c.idx.SearchInContext(ctx, c.req())
		if err != nil {
			t.Fatal(err)
		}
		if got.Total != want.Total || !slices.Equal(HitIDs(got.Hits), HitIDs(want.Hits)) {
			t.Errorf("%s: %v (%d), want %v (%d)", c.name, HitIDs(got.Hits), got.Total, HitIDs(want.Hits), want.Total)
		}
	}
	// While another search is answered on every core but one, and where
	// the query reads fewer postings than MinSplitPostings.
	searching.Add(1)
	_, did, err := splitSearch(context.Background(), idx, q())
	searching.Add(-1)
	if err != nil || did {
		t.Errorf("beside another search: split %v, error %v", did, err)
	}
	MinSplitPostings = math.MaxUint64
	if _, did, err := splitSearch(context.Background(), idx, q()); err != nil || did {
		t.Errorf("short query: split %v, error %v", did, err)
	}
}

// TestSplitSearchCanceled: a canceled search reports the cancellation.
func TestSplitSearchCanceled(t *testing.T) {
	splitting(t)
	idx, _ := splitIndex(t, bindex.TFIDFScoring)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := splitSearch(ctx, idx, bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 10, 0, false))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want %v", err, context.Canceled)
	}
}

// BenchmarkSearchSplit times the demo questions as match queries over the
// demo corpus with Bleve's one search (bleve) and with every search split
// (split). At 500 documents a split costs more than it saves:
// examples/splitcost measures where it pays.
func BenchmarkSearchSplit(b *testing.B) {
	splitting(b)
	idx, reqs := windowSearches(b)
	for _, bc := range []struct {
		name  string
		least uint64
	}{{"bleve", math.MaxUint64}, {"split", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			MinSplitPostings = bc.least
			defer func() { MinSplitPostings = 0 }()
			searchEach(b, idx, reqs)
		})
	}
}

// windowSearches returns the demo corpus (BM25) and its questions as
// match queries for 116 hits, a window's search.
func windowSearches(b *testing.B) (bleve.Index, []*bleve.SearchRequest) {
	idx, queries := splitIndex(b, bindex.BM25Scoring)
	reqs := make([]*bleve.SearchRequest, len(queries))
	for i, q := range queries {
		reqs[i] = bleve.NewSearchRequestOptions(bleve.NewMatchQuery(q.FullText()), 116, 0, false)
	}
	return idx, reqs
}

// searchEach times Search of reqs, one after another.
func searchEach(b *testing.B, idx bleve.Index, reqs []*bleve.SearchRequest) {
	i := 0
	for b.Loop() {
		if _, err := Search(context.Background(), idx, reqs[i%len(reqs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
