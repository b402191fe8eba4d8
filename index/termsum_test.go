package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"
)

// sumMode is how summed sums terms: over windows of how many document
// numbers (0: sumWindow), and whether on two cores.
type sumMode struct {
	chunk uint64
	split bool
}

var sumModes = []sumMode{{0, false}, {64, false}, {64, true}}

func (m sumMode) String() string { return fmt.Sprintf("windows of %d, split %v", m.chunk, m.split) }

// set makes summed sum terms as m says for the rest of the test.
func (m sumMode) set(t testing.TB) {
	chunk, least, procs := sumChunk, MinSplitPostings, runtime.GOMAXPROCS(0)
	if m.chunk > 0 {
		sumChunk = m.chunk
	}
	if m.split {
		MinSplitPostings = 0
		runtime.GOMAXPROCS(max(2, procs))
	}
	t.Cleanup(func() {
		sumChunk, MinSplitPostings = chunk, least
		runtime.GOMAXPROCS(procs)
	})
}

// summed answers req by summing terms, on two cores where split, failing
// the test where its query was left to Bleve's searchers or not split as
// asked.
func summed(t *testing.T, idx bleve.Index, req *bleve.SearchRequest, split ...bool) *bleve.SearchResult {
	t.Helper()
	q := &sumQuery{Query: req.Query, keep: req.From + req.Size, split: len(split) > 0 && split[0]}
	res, err := searchAs(context.Background(), idx, req, q)
	if err != nil {
		t.Fatal(err)
	}
	if q.sum == nil {
		t.Fatalf("%v: terms not summed", req.Query)
	}
	if q.split != (len(q.sum.trees) == 2) {
		t.Fatalf("%v: %d trees, split %v", req.Query, len(q.sum.trees), q.split)
	}
	res.Total += q.sum.dropped
	return res
}

// TestSumTermsAgreesWithBleve: over the demo corpus, with TF-IDF and BM25
// scoring, match queries of every demo query, of one word, of repeated
// and unknown words and of many words, disjunctions of match queries over
// fields and of boosted term queries find, summed term at a time, the
// hits Bleve's searchers find, whole lists and pages; where Bleve's
// disjunction keeps its clauses in a slice (ten or fewer) every score is
// Bleve's to the bit.
func TestSumTermsAgreesWithBleve(t *testing.T) {
	for _, mode := range sumModes {
		t.Run(mode.String(), func(t *testing.T) {
			mode.set(t)
			sumTermsAgreeWithBleve(t, mode.split)
		})
	}
}

// sumTermsAgreeWithBleve is TestSumTermsAgreesWithBleve in one mode.
func sumTermsAgreeWithBleve(t *testing.T, split bool) {
	for _, scoring := range []string{bindex.TFIDFScoring, bindex.BM25Scoring} {
		idx, queries := splitIndex(t, scoring)
		qs := map[string]query.Query{}
		for _, q := range queries[:25] {
			qs["match "+q.ID] = bleve.NewMatchQuery(q.FullText())
		}
		qs["one word"] = bleve.NewMatchQuery("water")
		qs["repeated"] = bleve.NewMatchQuery("water water health")
		qs["unknown"] = bleve.NewMatchQuery("zyzzyva water")
		qs["long"] = bleve.NewMatchQuery(strings.Repeat("water health food disease risk children study ", 3))
		boosted := bleve.NewMatchQuery("health risk")
		boosted.SetBoost(2.5)
		qs["boosted"] = boosted
		title, text := bleve.NewMatchQuery("health water children"), bleve.NewMatchQuery("health water children")
		title.SetField("title")
		title.SetBoost(2)
		text.SetField("text")
		qs["fields"] = bleve.NewDisjunctionQuery(title, text)
		var terms []query.Query
		for i, w := range []string{"water", "health", "risk", "food", "zyzzyva"} {
			tq := bleve.NewTermQuery(w)
			tq.SetBoost(0.5 + float64(i))
			terms = append(terms, tq)
		}
		qs["terms"] = bleve.NewDisjunctionQuery(terms...)
		qs["nested"] = bleve.NewDisjunctionQuery(bleve.NewDisjunctionQuery(terms[:2]...), bleve.NewMatchQuery("food"), terms[3])
		for name, q := range qs {
			// Disjunctions of ten clauses or fewer.
			exact := !strings.HasPrefix(name, "match") && name != "long"
			name = scoring + " " + name
			all := bleve.NewSearchRequestOptions(q, 1000, 0, false)
			got, want := summed(t, idx, all, split), unsplit(t, idx, all)
			sameHits(t, name, got, want, false)
			if exact {
				scores := map[string]float64{}
				for _, h := range want.Hits {
					scores[h.ID] = h.Score
				}
				for _, h := range got.Hits {
					if h.Score != scores[h.ID] {
						t.Fatalf("%s: %s scored %v, Bleve %v", name, h.ID, h.Score, scores[h.ID])
					}
				}
			}
			for _, size := range []int{1, 10, 100} {
				req := bleve.NewSearchRequestOptions(q, size, 0, false)
				sameHits(t, fmt.Sprintf("%s size %d", name, size), summed(t, idx, req, split), unsplit(t, idx, req), true)
				page := bleve.NewSearchRequestOptions(q, size, 5, false)
				sameHits(t, fmt.Sprintf("%s from 5 size %d", name, size), summed(t, idx, page, split), unsplit(t, idx, page), true)
			}
		}
	}
}

// TestSumTermsLeftToBleve: queries that are not disjunctions over terms,
// or whose request or terms sumQuery does not score, are answered by
// Bleve's searchers, as Bleve answers them.
func TestSumTermsLeftToBleve(t *testing.T) {
	idx, _ := splitIndex(t, bindex.BM25Scoring)
	match := func(text string, f func(*query.MatchQuery)) query.Query {
		q := bleve.NewMatchQuery(text)
		if f != nil {
			f(q)
		}
		return q
	}
	min2 := bleve.NewDisjunctionQuery(bleve.NewTermQuery("water"), bleve.NewTermQuery("health"))
	min2.SetMin(2)
	deep := query.Query(bleve.NewTermQuery("water"))
	for range maxSumNodes + 1 {
		deep = bleve.NewDisjunctionQuery(deep)
	}
	plain := func(q query.Query) func() *bleve.SearchRequest {
		return func() *bleve.SearchRequest { return bleve.NewSearchRequestOptions(q, 10, 0, false) }
	}
	cases := []struct {
		name string
		req  func() *bleve.SearchRequest
	}{
		{"fuzzy", plain(match("watr helth", func(q *query.MatchQuery) { q.SetFuzziness(1) }))},
		{"auto fuzzy", plain(match("watr helth", func(q *query.MatchQuery) { q.SetAutoFuzziness(true) }))},
		{"and", plain(match("water health", func(q *query.MatchQuery) { q.SetOperator(query.MatchQueryOperatorAnd) }))},
		{"no terms", plain(match("the of", func(q *query.MatchQuery) { q.Analyzer = "en" }))},
		{"unknown analyzer", plain(match("water", func(q *query.MatchQuery) { q.Analyzer = "zyzzyva" }))},
		{"term", plain(bleve.NewTermQuery("water"))},
		{"min 2", plain(min2)},
		{"deep", plain(deep)},
		{"phrase in a disjunction", plain(bleve.NewDisjunctionQuery(bleve.NewMatchQuery("water"), bleve.NewMatchPhraseQuery("health risk")))},
		{"explain", func() *bleve.SearchRequest { r := plain(match("water health", nil))(); r.Explain = true; return r }},
		{"locations", func() *bleve.SearchRequest {
			r := plain(match("water health", nil))()
			r.IncludeLocations = true
			return r
		}},
	}
	for _, c := range cases {
		q := &sumQuery{Query: c.req().Query, keep: 10}
		got, gotErr := searchAs(context.Background(), idx, c.req(), q)
		if q.sum != nil {
			t.Errorf("%s: terms summed", c.name)
		}
		want, wantErr := idx.SearchInContext(context.Background(), c.req())
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%s: error %v, Bleve's %v", c.name, gotErr, wantErr)
		}
		if gotErr != nil {
			continue
		}
		if got.Total != want.Total || !slices.Equal(HitIDs(got.Hits), HitIDs(want.Hits)) {
			t.Errorf("%s: %v (%d), want %v (%d)", c.name, HitIDs(got.Hits), got.Total, HitIDs(want.Hits), want.Total)
		}
	}
}

// TestSumTermsCanceled: a canceled search summing terms reports the
// cancellation and leaves its accumulators for the next search cleared.
func TestSumTermsCanceled(t *testing.T) {
	idx, queries := splitIndex(t, bindex.TFIDFScoring)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery(queries[0].FullText()), 10, 0, false)
	if _, err := Search(ctx, idx, req); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want %v", err, context.Canceled)
	}
	sameHits(t, "after", summed(t, idx, req), unsplit(t, idx, req), true)
}

// countView is an index reader whose document count is another's plus
// extra, as a shard's reader counting a whole collection's documents is.
type countView struct {
	bindex.IndexReader
	extra uint64
}

func (v countView) DocCount() (uint64, error) {
	n, err := v.IndexReader.DocCount()
	return n + v.extra, err
}

// viewQuery searches its Query through a countView.
type viewQuery struct {
	query.Query
	extra uint64
}

func (q viewQuery) SplitsAs() query.Query { return q.Query }

func (q viewQuery) View(r bindex.IndexReader) bindex.IndexReader { return countView{r, q.extra} }

func (q viewQuery) Searcher(ctx context.Context, r bindex.IndexReader, m mapping.IndexMapping, o search.SearcherOptions) (search.Searcher, error) {
	return q.Query.Searcher(ctx, q.View(r), m, o)
}

// TestSumTermsReadsThrough: a ReadsThrough query is scored term at a time
// through its view of the reader, as Bleve's searchers score it through
// the same view.
func TestSumTermsReadsThrough(t *testing.T) {
	idx, queries := splitIndex(t, bindex.TFIDFScoring)
	for _, q := range queries[:5] {
		req := bleve.NewSearchRequestOptions(viewQuery{bleve.NewMatchQuery(q.FullText()), 10000}, 20, 0, false)
		got, want := summed(t, idx, req), unsplit(t, idx, req)
		sameHits(t, q.ID, got, want, true)
		plain := unsplit(t, idx, bleve.NewSearchRequestOptions(bleve.NewMatchQuery(q.FullText()), 20, 0, false))
		if got.MaxScore == plain.MaxScore {
			t.Fatalf("%s: the view's document count changed no score", q.ID)
		}
	}
	// A tree with a part that cannot be summed (a match whose analyzer
	// leaves no term) is Bleve's, through the view once.
	stop := bleve.NewMatchQuery("the of")
	stop.Analyzer = "en"
	req := bleve.NewSearchRequestOptions(viewQuery{bleve.NewDisjunctionQuery(bleve.NewMatchQuery("water"), stop), 10000}, 20, 0, false)
	q := &sumQuery{Query: req.Query, keep: 20}
	got, err := searchAs(context.Background(), idx, req, q)
	if err != nil {
		t.Fatal(err)
	}
	if q.sum != nil {
		t.Fatal("terms summed")
	}
	sameHits(t, "left to Bleve", got, unsplit(t, idx, req), false)
}

// FuzzSumTerms: any text, as a match query over one field or over two
// fields boosted, finds summed term at a time (in each of sumModes) the
// hits Bleve's searchers find.
func FuzzSumTerms(f *testing.F) {
	idx, queries := splitIndex(f, bindex.BM25Scoring)
	for i, q := range queries[:3] {
		f.Add(q.FullText(), 1.0, uint8(i))
	}
	f.Add("water water WATER", 0.5, uint8(2))
	f.Add("", 2.0, uint8(1))
	f.Add("zyzzyva", 1.0, uint8(0))
	f.Fuzz(func(t *testing.T, text string, boost float64, mode uint8) {
		sumModes[int(mode)%len(sumModes)].set(t)
		title, body := bleve.NewMatchQuery(text), bleve.NewMatchQuery(text)
		title.SetField("title")
		title.SetBoost(boost)
		body.SetField("text")
		for name, q := range map[string]query.Query{"match": bleve.NewMatchQuery(text), "fields": bleve.NewDisjunctionQuery(title, body)} {
			req := bleve.NewSearchRequestOptions(q, 20, 0, false)
			want, err := idx.SearchInContext(context.Background(), req)
			if err != nil {
				t.Skip(err)
			}
			got, err := Search(context.Background(), idx, req)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			sameHits(t, name, got, want, true)
		}
	})
}

// BenchmarkSearchSum times the demo questions as match queries over the
// demo corpus, 116 hits (a window's search), with Bleve's searchers
// (bleve) and summed term at a time (sum). examples/windowcost and
// semrank bench compare them over CACM and larger indexes.
func BenchmarkSearchSum(b *testing.B) {
	idx, reqs := windowSearches(b)
	for _, bc := range []struct {
		name string
		sum  bool
	}{{"bleve", false}, {"sum", true}} {
		b.Run(bc.name, func(b *testing.B) {
			sums, least := SumTerms, MinSplitPostings
			SumTerms, MinSplitPostings = bc.sum, math.MaxUint64
			defer func() { SumTerms, MinSplitPostings = sums, least }()
			searchEach(b, idx, reqs)
		})
	}
}

// TestSumTermsSplits: Search sums a long query's terms on two cores when
// it may split (no other search holds the other core), and on one when
// another search does, finding Bleve's hits either way.
func TestSumTermsSplits(t *testing.T) {
	sumMode{64, true}.set(t)
	idx, queries := splitIndex(t, bindex.TFIDFScoring)
	req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery(queries[0].FullText()), 20, 0, false)
	want := unsplit(t, idx, req)
	for _, busy := range []bool{false, true} {
		if busy {
			searching.Add(1)
		}
		got, did, err := splitSearch(context.Background(), idx, req)
		if busy {
			searching.Add(-1)
		}
		if err != nil {
			t.Fatal(err)
		}
		if did == busy {
			t.Errorf("beside another search %v: split %v", busy, did)
		}
		sameHits(t, fmt.Sprintf("busy %v", busy), got, want, true)
	}
}
