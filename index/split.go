package index

import (
	"container/heap"
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"
)

// MinSplitPostings is the fewest postings a query's searcher reads (by
// its own estimate, search.Searcher's Count) for Search to split it:
// below it, starting a second goroutine and building a second searcher
// cost about what the half they save, or more. 0 splits every search
// Search may. Measured (docs/RESULTS.md, examples/splitcost): split,
// searches reading 2,048–4,095 postings took 1.0–1.15 of one search's
// time, 4,096–8,191 took 0.82–0.87, 16,384 and more 0.63.
var MinSplitPostings uint64 = 4096

// searching counts the searches Search is answering. A search splits
// only while the others leave it a core for its second half: when every
// core already answers a search, splitting adds work and gains nothing.
// It counts this process's searches alone: processes that share the
// cores (several shard servers on one machine) split as if each had them
// to itself, and a program that knows its cores are busy sets
// MinSplitPostings to math.MaxUint64.
var searching atomic.Int64

// Search answers req as idx.SearchInContext does, faster where it can.
// Where idx is one scorch index and req a plain search by score (no
// facets, highlights, explanations, locations, sort keys, cursors,
// pre-search data or search callbacks), a text search's query (a match
// query, or disjunctions of match and term queries) is scored term at a
// time (see SumTerms), and other queries reading at least
// MinSplitPostings postings, while no other Search holds the other cores,
// are searched on two cores. Bleve collects a search's hits on one
// goroutine, and a long query over a large index (a disjunction of a few
// dozen terms, as a question makes) spends its time there, scoring every
// matching document. Split, the index's documents are searched as two
// halves at once: req's own searcher scores one while a second searcher
// over the same snapshot scores the other on another goroutine; each
// keeps only the hits that can still rank among the first From+Size, and
// Bleve's collector reads both halves' in document order. The hits, their
// order and Total are those of one search, with one proviso
// SearchTiesByID absorbs: a disjunction's score can differ in its last
// bits (Bleve sums its terms in an order that depends on the path its
// searcher took to the document), so hits whose scores differ only there
// can trade places. HitNumbers count the hits the collector saw.
func Search(ctx context.Context, idx bleve.Index, req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	res, _, err := splitSearch(ctx, idx, req)
	return res, err
}

// splitSearch is Search, reporting whether it split the search.
func splitSearch(ctx context.Context, idx bleve.Index, req *bleve.SearchRequest) (*bleve.SearchResult, bool, error) {
	n := searching.Add(1)
	defer searching.Add(-1)
	if !byScoreAlone(ctx, idx, req) {
		res, err := idx.SearchInContext(ctx, req)
		return res, false, err
	}
	free := n <= int64(runtime.GOMAXPROCS(0)/2)
	if SumTerms && summable(req.Query) {
		q := &sumQuery{Query: req.Query, keep: req.From + req.Size, split: free}
		res, err := searchAs(ctx, idx, req, q)
		if err != nil || q.sum == nil {
			return res, false, err
		}
		// The collector counted the hits it was given.
		res.Total += q.sum.dropped
		return res, len(q.sum.trees) > 1, nil
	}
	if !free || !splitSafe(req.Query) {
		res, err := idx.SearchInContext(ctx, req)
		return res, false, err
	}
	q := &splitQuery{Query: req.Query, keep: req.From + req.Size}
	res, err := searchAs(ctx, idx, req, q)
	if err != nil || q.split == nil {
		return res, false, err
	}
	// The collector counted the odd chunks' hits it was given; their
	// searcher counted them all.
	res.Total += q.split.dropped
	return res, true, nil
}

// searchAs answers req with its query replaced by q, a query that
// searches as req's does.
func searchAs(ctx context.Context, idx bleve.Index, req *bleve.SearchRequest, q query.Query) (*bleve.SearchResult, error) {
	r := *req
	r.Query = q
	res, err := idx.SearchInContext(ctx, &r)
	if err != nil {
		return nil, err
	}
	if res.Request == &r {
		res.Request = req // as Bleve sets it: with Explain
	}
	return res, nil
}

// byScoreAlone reports whether req is a plain search by score of idx,
// one scorch index, that Search may answer with a searcher of its own
// (split or summing terms): no facets, highlights, explanations,
// locations, sort keys, cursors, pre-search data, search callbacks,
// synonyms or nested documents.
func byScoreAlone(ctx context.Context, idx bleve.Index, req *bleve.SearchRequest) bool {
	if req == nil || req.Query == nil {
		return false
	}
	if req.Size <= 0 || req.From < 0 || req.From+req.Size <= 0 || req.Facets != nil || req.Highlight != nil ||
		req.Explain || req.IncludeLocations || req.Score != "" || req.SearchAfter != nil || req.SearchBefore != nil ||
		req.PreSearchData != nil || !byScore(req.Sort) || hasKNN(req) {
		return false
	}
	for _, k := range []any{search.PreSearchKey, search.MaxTermSearchersKey, search.MakeDocumentMatchHandlerKey,
		search.ScoreFusionKey, search.SearchIncrementalCostKey} {
		if ctx.Value(k) != nil {
			return false
		}
	}
	if _, alias := idx.(bleve.IndexAlias); alias {
		return false
	}
	m, ok := idx.Mapping().(*mapping.IndexMappingImpl)
	if !ok || m.SynonymCount() > 0 || m.CountNested() > 0 {
		return false
	}
	adv, err := idx.Advanced()
	if err != nil {
		return false
	}
	_, ok = adv.(*scorch.Scorch)
	return ok
}

// hasKNN reports whether req asks for a vector search too: Bleve merges
// its hits with those of the query, so every match must reach the
// collector. The field exists only where Bleve is built with the vectors
// tag, hence reflection.
func hasKNN(req *bleve.SearchRequest) bool {
	i := knnField()
	return i != nil && reflect.ValueOf(req).Elem().FieldByIndex(i).Len() > 0
}

// knnField is the index of SearchRequest's KNN field, nil where Bleve is
// built without it.
var knnField = sync.OnceValue(func() []int {
	f, ok := reflect.TypeFor[bleve.SearchRequest]().FieldByName("KNN")
	if !ok || f.Type.Kind() != reflect.Slice {
		return nil
	}
	return f.Index
})

// byScore reports whether so sorts by descending score alone, as a
// request without a sort does.
func byScore(so search.SortOrder) bool {
	if len(so) == 0 {
		return true
	}
	s, ok := so[0].(*search.SortScore)
	return len(so) == 1 && ok && s.Desc
}

// SplitsAs is implemented by a query that searches as the query it
// returns does, through its own view of the index reader: a view that
// keeps the reader's document numbers and that two searchers may read at
// once (package cluster's query searched with a whole collection's
// statistics). Search splits it where it would split that query.
type SplitsAs interface {
	SplitsAs() query.Query
}

// ReadsThrough is implemented by a SplitsAs query whose view of the index
// reader is View's: Search scores its query term at a time (see
// SumTerms) through that view, where it would score the query it splits
// as.
type ReadsThrough interface {
	SplitsAs
	View(r bindex.IndexReader) bindex.IndexReader
}

// splitSafe reports whether q is built of queries whose searchers can run
// two at once over one snapshot: those that read postings and stored
// statistics alone. Searchers that share state kept in the search's
// context while they run (a geo shape's buffer pool, vector search) are
// left to Bleve's one goroutine.
func splitSafe(q query.Query) bool {
	if w, ok := q.(SplitsAs); ok {
		return splitSafe(w.SplitsAs())
	}
	switch q := q.(type) {
	case *query.TermQuery, *query.MatchQuery, *query.MatchPhraseQuery, *query.PhraseQuery,
		*query.MultiPhraseQuery, *query.MatchAllQuery, *query.MatchNoneQuery, *query.PrefixQuery,
		*query.FuzzyQuery, *query.WildcardQuery, *query.RegexpQuery, *query.TermRangeQuery,
		*query.NumericRangeQuery, *query.DateRangeQuery, *query.DocIDQuery, *query.BoolFieldQuery,
		*query.QueryStringQuery:
		return true
	case *query.DisjunctionQuery:
		return allSplitSafe(q.Disjuncts)
	case *query.ConjunctionQuery:
		return allSplitSafe(q.Conjuncts)
	case *query.BooleanQuery:
		for _, c := range []query.Query{q.Must, q.Should, q.MustNot, q.Filter} {
			if c != nil && !splitSafe(c) {
				return false
			}
		}
		return true
	}
	return false
}

func allSplitSafe(qs []query.Query) bool {
	for _, q := range qs {
		if !splitSafe(q) {
			return false
		}
	}
	return true
}

// splitQuery is a query whose searcher searches its Query's documents in
// two halves at once (see Search). It is only ever the top of a
// request's query: nothing sets its searcher's query norm.
type splitQuery struct {
	query.Query
	keep int // the collector's From+Size

	claimed atomic.Bool    // a searcher has split
	split   *splitSearcher // set when the searcher splits
}

// Searcher returns q.Query's searcher over r, split in two where r is a
// scorch snapshot and the query reads at least MinSplitPostings postings
// (the searcher's own estimate, Count). Only the first searcher built
// splits, so a caller that builds more sees one split.
func (q *splitQuery) Searcher(ctx context.Context, r bindex.IndexReader, m mapping.IndexMapping, o search.SearcherOptions) (search.Searcher, error) {
	first, err := q.Query.Searcher(ctx, r, m, o)
	if err != nil {
		return nil, err
	}
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok || first.Count() < MinSplitPostings {
		return first, nil
	}
	n := docNumbers(snap)
	chunk := max(minChunk, (n+maxChunks-1)/maxChunks)
	if n <= chunk || !q.claimed.CompareAndSwap(false, true) {
		return first, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &splitSearcher{Searcher: first, chunk: chunk, chunks: (n + chunk - 1) / chunk, keep: q.keep,
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
	s.report, _ = ctx.Value(search.SearchIOStatsCallbackKey).(search.SearchIOStatsCallbackFunc)
	// The odd chunks' searcher reports the bytes it reads to s, and s to
	// the search once it is closed: the search's own count is not safe
	// for two goroutines.
	ctx = context.WithValue(ctx, search.SearchIOStatsCallbackKey, search.SearchIOStatsCallbackFunc(func(n uint64) { s.bytesRead += n }))
	go func() {
		defer close(s.done)
		defer func() {
			if p := recover(); p != nil {
				s.err = fmt.Errorf("index: searcher panicked: %v", p)
			}
		}()
		s.err = s.collectOdd(ctx, q, r, m, o)
	}()
	q.split = s
	return s, nil
}

// The halves are not two contiguous ranges of documents: documents added
// later are often longer (a collection's later years have abstracts, its
// early ones titles alone) and match more terms. They are the even and
// the odd chunks of the document numbers, at most maxChunks chunks of at
// least minChunk documents; each searcher skips the other's chunks.
const (
	maxChunks = 16
	minChunk  = 128
)

// splitSearcher scores the even chunks of document numbers with its
// Searcher, at the collector's first Next, while a goroutine started with
// it scores the odd chunks with another; then it yields both halves' hits
// in document order, as one searcher would. Each half passes on only the
// hits that rank among the best keep of its own found so far (in score,
// then document order, as Bleve's collector ranks): no other can rank
// among the collector's keep, and they are few (about keep·ln(hits/keep)),
// so neither waits on the other until both are done and the collector
// ranks a few hundred hits rather than every match.
type splitSearcher struct {
	search.Searcher        // the even chunks'
	chunk           uint64 // documents a chunk
	chunks          uint64 // chunks in all
	keep            int

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has finished
	report search.SearchIOStatsCallbackFunc

	// Written by the goroutine, read after done.
	second    search.Searcher // the odd chunks'
	odd       half
	bytesRead uint64
	err       error

	collected bool
	dropped   uint64 // both halves' hits not passed on
	passed           // both halves' hits passed on
}

// scored is a hit passed on: its document number and score.
type scored struct {
	num   uint64
	score float64
}

// worse reports whether a ranks below b.
func worse(a, b scored) bool {
	return a.score < b.score || a.score == b.score && a.num > b.num
}

// half is what a half passes on.
type half struct {
	hits    []scored // by document number
	dropped uint64   // hits not passed on
}

// Next implements search.Searcher.
func (s *splitSearcher) Next(sc *search.SearchContext) (*search.DocumentMatch, error) {
	if !s.collected {
		s.collected = true
		even, err := collect(s.ctx, s.Searcher, sc, s.chunk, s.chunks, 0, s.keep)
		if err != nil {
			return nil, err
		}
		<-s.done
		if s.err != nil {
			return nil, s.err
		}
		s.dropped = even.dropped + s.odd.dropped
		s.hits = mergeByNumber(even.hits, s.odd.hits)
	}
	return s.passed.match(sc), nil
}

// Advance implements search.Searcher.
func (s *splitSearcher) Advance(sc *search.SearchContext, id bindex.IndexInternalID) (*search.DocumentMatch, error) {
	return advance(s, sc, id)
}

// passed is the hits a searcher of Search's passes on to Bleve's
// collector, by document number.
type passed struct {
	hits []scored
	next int
}

// match returns the next hit passed on as a match from sc's pool, nil
// after the last.
func (p *passed) match(sc *search.SearchContext) *search.DocumentMatch {
	if p.next == len(p.hits) {
		return nil
	}
	h := p.hits[p.next]
	p.next++
	d := sc.DocumentMatchPool.Get()
	d.IndexInternalID = bindex.NewIndexInternalID(d.IndexInternalID, h.num)
	d.Score = h.score
	return d
}

// advance implements s's Advance by reading on to id: the collector does
// not advance the searcher it collects from.
func advance(s search.Searcher, sc *search.SearchContext, id bindex.IndexInternalID) (*search.DocumentMatch, error) {
	for {
		d, err := s.Next(sc)
		if err != nil || d == nil || d.IndexInternalID.Compare(id) >= 0 {
			return d, err
		}
		sc.DocumentMatchPool.Put(d)
	}
}

// collectOdd builds q's searcher over r and collects the odd chunks'
// hits with it.
func (s *splitSearcher) collectOdd(ctx context.Context, q *splitQuery, r bindex.IndexReader, m mapping.IndexMapping, o search.SearcherOptions) error {
	var err error
	if s.second, err = q.Query.Searcher(ctx, r, m, o); err != nil {
		return err
	}
	sc := &search.SearchContext{
		DocumentMatchPool: search.NewDocumentMatchPool(s.second.DocumentMatchPoolSize()+1, 1),
		IndexReader:       r,
	}
	s.odd, err = collect(ctx, s.second, sc, s.chunk, s.chunks, 1, s.keep)
	return err
}

// collect reads the hits of searcher in the chunks of the given parity
// (of chunks chunks of size documents) and returns those that rank among
// the best keep found so far, counting the others.
func collect(ctx context.Context, searcher search.Searcher, sc *search.SearchContext, size, chunks, parity uint64, keep int) (half, error) {
	var (
		out   half
		best  = bestOf{keep: keep}
		count uint64
		id    bindex.IndexInternalID
		d     *search.DocumentMatch
		err   error
	)
	for c := parity; c < chunks; c += 2 {
		start, end := c*size, (c+1)*size
		if c == 0 {
			d, err = searcher.Next(sc)
		} else if d == nil || d.IndexInternalID.Value() < start {
			sc.DocumentMatchPool.Put(d)
			id = bindex.NewIndexInternalID(id, start)
			d, err = searcher.Advance(sc, id)
		}
		for ; err == nil && d != nil; d, err = searcher.Next(sc) {
			n := d.IndexInternalID.Value()
			if n >= end {
				break
			}
			if count%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return half{}, err
				}
			}
			count++
			if h := (scored{n, d.Score}); best.push(h) {
				out.hits = append(out.hits, h)
			}
			sc.DocumentMatchPool.Put(d)
		}
		if err != nil {
			return half{}, err
		}
		if d == nil {
			break
		}
	}
	sc.DocumentMatchPool.Put(d)
	out.dropped = count - uint64(len(out.hits))
	return out, nil
}

// mergeByNumber merges a and b, each by document number, into one list
// by document number.
func mergeByNumber(a, b []scored) []scored {
	out := make([]scored, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].num < b[0].num {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// Close implements search.Searcher: it stops the odd chunks' search,
// waits for it, and closes both searchers.
func (s *splitSearcher) Close() error {
	s.cancel()
	<-s.done
	err := s.Searcher.Close()
	if s.second != nil {
		if err2 := s.second.Close(); err == nil {
			err = err2
		}
	}
	if s.report != nil {
		s.report(s.bytesRead)
	}
	return err
}

// bestOf keeps the best keep hits pushed, in a heap (container/heap's
// Interface) whose root is the worst of them.
type bestOf struct {
	keep int
	h    []scored
}

// push adds e and reports whether it ranks among the best keep so far.
func (b *bestOf) push(e scored) bool {
	switch {
	case len(b.h) < b.keep:
		heap.Push(b, e)
	case worse(b.h[0], e):
		b.h[0] = e
		heap.Fix(b, 0)
	default:
		return false
	}
	return true
}

func (b *bestOf) Len() int           { return len(b.h) }
func (b *bestOf) Less(i, j int) bool { return worse(b.h[i], b.h[j]) }
func (b *bestOf) Swap(i, j int)      { b.h[i], b.h[j] = b.h[j], b.h[i] }
func (b *bestOf) Push(x any)         { b.h = append(b.h, x.(scored)) }
func (b *bestOf) Pop() any {
	e := b.h[len(b.h)-1]
	b.h = b.h[:len(b.h)-1]
	return e
}
