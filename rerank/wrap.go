package rerank

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"

	"github.com/semrank/semrank/index"
)

// base lets Index embed bleve.Index: embedding the interface type directly
// would clash with its Index method.
type base = bleve.Index

// Index is a bleve.Index whose searches are reranked by a Pipeline. Every
// other method is the wrapped index's own. Set its exported fields before
// the first search: searches read them without locking.
type Index struct {
	base
	pipeline *Pipeline
	tag      uint64 // sets this Index's hit numbers apart (see hitNumber)
}

// wraps counts Wrap's calls, to tag each Index.
var wraps atomic.Uint32

// hitNumber returns the HitNumber of the hit at position i of x's list.
// An IndexAlias orders its children's hits by score, then by HitNumber;
// two wrapped children tie often (each fuses its own window: with rrf,
// the hits at one place in each child's list tie), and when their tied
// hits' numbers tie too, the alias orders them differently from page to
// page, repeating some hits and leaving out others. The tag in the low
// bits keeps the numbers of different wrapped indexes apart, and the
// position in the high bits keeps each list's order.
func (x *Index) hitNumber(i int) uint64 { return uint64(i)<<32 | x.tag }

// Wrap returns idx with its score-sorted searches reranked by p, which is
// built against idx (EnvOf):
//
//	idx = rerank.Wrap(idx, pipeline)
//	res, err := idx.Search(req) // reranked hits
//
// A search retrieves max(window, From+Size) hits with the request's own
// query, reranks the window and pages the reranked list; hits past the
// window follow in first-stage order, and score cursors (SearchAfter,
// SearchBefore) page the same list. Requests sorted otherwise, requests
// for no hits or scores, queries without words, and every search when p is
// nil pass through to idx. With first-stage feedback (Feedback), the
// request's query finds the feedback documents and the expanded query the
// window. docs/ARCHITECTURE.md ("Wrap") details ties, cursors, stored
// fields and aliases.
func Wrap(idx bleve.Index, p *Pipeline) *Index {
	return &Index{base: idx, pipeline: p, tag: uint64(wraps.Add(1))}
}

// Unwrap returns the wrapped index.
func (x *Index) Unwrap() bleve.Index { return x.base }

// Pipeline returns the pipeline searches are reranked with.
func (x *Index) Pipeline() *Pipeline { return x.pipeline }

// Search implements bleve.Index.
func (x *Index) Search(req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	return x.SearchInContext(context.Background(), req)
}

type noRerankKey struct{}

type queryTextKey struct{}

// WithQueryText returns a context whose reranked searches give the stages
// text as the query's words, instead of the words of the request's query
// (QueryText): a search from text whose first-stage query is not that text
// (Pipeline.Query with first_stage.query_boost holds analyzed, boosted
// terms) still compares the candidates with what was asked.
func WithQueryText(ctx context.Context, text string) context.Context {
	return context.WithValue(ctx, queryTextKey{}, text)
}

// WithoutRerank returns a context whose searches through a wrapped index
// skip reranking, e.g. to show both side by side: they return the
// first-stage list a reranked search would rerank (tied hits at the
// window's edge chosen by ID, as index.TopN does, and the window's scores
// rounded as index.StableScore rounds them), paged as reranked results
// are, so that its pages agree with each other and its ranks with the
// first-stage ranks of reranked results. Its SearchAfter and
// SearchBefore pages are Bleve's own, as are its searches sorted by score
// then _id (Bleve's list orders tied hits by id; Bleve's cursor pages
// page Bleve's list).
func WithoutRerank(ctx context.Context) context.Context {
	return context.WithValue(ctx, noRerankKey{}, true)
}

// scoreSort reads a sort the reranked list can answer: by score, or by
// score then _id, which only breaks ties. It returns whether the score
// key is descending, and the _id key if there is one. No sort is Bleve's
// default, by descending score.
func scoreSort(so search.SortOrder) (desc bool, id *search.SortDocID, ok bool) {
	if len(so) == 0 {
		return true, nil, true
	}
	s, ok := so[0].(*search.SortScore)
	switch {
	case !ok || len(so) > 2:
		return false, nil, false
	case len(so) == 2:
		id, ok = so[1].(*search.SortDocID)
		return s.Desc, id, ok
	}
	return s.Desc, nil, true
}

func sortedByScore(req *bleve.SearchRequest) bool {
	desc, _, ok := scoreSort(req.Sort)
	return ok && desc
}

// Result is a search's answer with what the query path computed for each
// hit, which semrank's server reports and explains.
type Result struct {
	*bleve.SearchResult
	// Reranked reports whether the hits went through the pipeline; a
	// request Wrap passes through to the index (see Wrap) and a
	// WithoutRerank search did not.
	Reranked bool
	// Details holds, for each of the page's Hits, its first-stage rank
	// and score and its stage scores.
	Details []Detail
	// First is the first-stage list the search ranked, in first-stage
	// order from its first hit (a passed-through request's: its own
	// page, from its From).
	First []FirstHit
	// FirstStageTook is the time spent in first-stage searches and in
	// loading stored fields.
	FirstStageTook time.Duration
}

// Detail is what the query path knows of one hit.
type Detail struct {
	FirstStageRank  int // 1-based
	FirstStageScore float64
	// StageScores holds each stage's raw score, in Pipeline.Stages
	// order; nil for a hit outside the rerank window or not reranked.
	StageScores []float64
}

// FirstHit is one hit of the first-stage list.
type FirstHit struct {
	ID    string
	Rank  int // 1-based, in the first-stage list
	Score float64
	// RerankedRank is its place in the reranked list; its Rank when the
	// search was not reranked.
	RerankedRank int
	StageScores  []float64 // as Detail's
	// Fields and Fragments are the first stage's stored fields and
	// highlights: the request's, for the page's hits (others may have
	// none).
	Fields    map[string]any
	Fragments search.FieldFragmentMap
}

// FirstStageError is the error of a first-stage search (or of loading its
// hits' stored fields): often the query's fault, which Bleve finds only
// when it builds the query's searcher (a bad regexp, say).
type FirstStageError struct{ Err error }

func (e *FirstStageError) Error() string { return e.Err.Error() }
func (e *FirstStageError) Unwrap() error { return e.Err }

// firstStageErr wraps err, unless nil, as a FirstStageError.
func firstStageErr(err error) error {
	if err == nil {
		return nil
	}
	return &FirstStageError{err}
}

// SearchInContext implements bleve.Index.
func (x *Index) SearchInContext(ctx context.Context, req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	res, err := x.SearchDetailed(ctx, req)
	if err != nil {
		return nil, err
	}
	return res.SearchResult, nil
}

// SearchDetailed answers req as SearchInContext does, with what the query
// path computed for each hit: its first-stage rank and score and its
// stage scores, and the first-stage list it reranked.
func (x *Index) SearchDetailed(ctx context.Context, req *bleve.SearchRequest) (*Result, error) {
	_, pre := ctx.Value(search.PreSearchKey).(bool)
	noRerank := ctx.Value(noRerankKey{}) != nil
	if pre || req == nil || x.pipeline == nil || req.Size == 0 || req.Score == bleve.ScoreNone {
		return x.passThrough(ctx, req)
	}
	c, byCursor, cursorErr := scoreCursor(req)
	// Without reranking, cursor pages are Bleve's own, and so is a sort
	// by score then _id: the first-stage list (its window's scores
	// rounded, hits past it in Bleve's order) has no id order for its
	// ties, and Bleve's cursor pages follow Bleve's list.
	if noRerank && (byCursor || len(req.Sort) > 1) || !byCursor && (!sortedByScore(req) || len(req.SearchAfter) > 0 || len(req.SearchBefore) > 0) {
		return x.passThrough(ctx, req)
	}
	text, ok := ctx.Value(queryTextKey{}).(string)
	if !ok {
		text = QueryText(req.Query)
	}
	if strings.TrimSpace(text) == "" {
		return x.passThrough(ctx, req)
	}
	start := time.Now()
	if req.From < 0 || req.Size < 0 {
		return nil, fmt.Errorf("rerank: negative from (%d) or size (%d)", req.From, req.Size)
	}
	if byCursor {
		if cursorErr != nil {
			return nil, cursorErr
		}
		return x.searchFrom(ctx, req, text, c, start)
	}
	end := addSat(req.From, req.Size)
	res, err := x.ranked(ctx, req, text, req.From, end, noRerank)
	if err != nil {
		return nil, err
	}
	return page(res, req, req.From, end, false, start), nil
}

// passThrough answers req with the wrapped index's own search: its hits
// are their own first stage.
func (x *Index) passThrough(ctx context.Context, req *bleve.SearchRequest) (*Result, error) {
	start := time.Now()
	res, err := x.base.SearchInContext(ctx, req)
	if err != nil {
		return nil, firstStageErr(err)
	}
	out := &Result{SearchResult: res, FirstStageTook: time.Since(start), Details: make([]Detail, len(res.Hits)), First: make([]FirstHit, len(res.Hits))}
	from := 0
	if req != nil && len(req.SearchAfter) == 0 && len(req.SearchBefore) == 0 {
		from = req.From
	}
	for i, h := range res.Hits {
		out.Details[i] = Detail{FirstStageRank: from + i + 1, FirstStageScore: h.Score}
		out.First[i] = FirstHit{ID: h.ID, Rank: from + i + 1, Score: h.Score, RerankedRank: from + i + 1, Fields: h.Fields, Fragments: h.Fragments}
	}
	return out, nil
}

// addSat returns a+b for non-negative a and b, saturated: a request for
// every hit (Size math.MaxInt) from an offset must not wrap around.
func addSat(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// ranked returns the first end hits of req's reranked list (of its
// first-stage list with noRerank): the whole list from the first hit,
// which page cuts to the page [from, end). When the page starts past the
// hits the stages read (the window's; none with noRerank), only those
// and, if req asks for fields, the page's carry stored fields, fetched
// after the search (index.FetchFields); from is -1 when the page is not
// known yet (a cursor page: searchFrom fetches its fields once it is).
func (x *Index) ranked(ctx context.Context, req *bleve.SearchRequest, text string, from, end int, noRerank bool) (*Result, error) {
	start := time.Now()
	ctx = withWindowMemo(ctx)
	w := x.pipeline.WindowSize()
	first := *req
	first.From = 0
	first.Size = max(w, end)
	// A cursor page (see searchFrom) is found in the list; the first stage
	// lists from the top, by descending score.
	first.SearchAfter, first.SearchBefore = nil, nil
	if len(first.Sort) > 0 {
		first.Sort = search.SortOrder{&search.SortScore{Desc: true}}
	}
	// Highlights need the search's term locations, so they load stored
	// fields in the one search: every field, which stages read as a plain
	// Bleve index's metadata (without reranking, the request's). Other
	// searches collect their hits without fields, and load those of the
	// few hits that need them after: the window's hits whose documents
	// stages read (DocReader), and the page's.
	lazy := req.Highlight == nil
	first.Fields = []string{"*"}
	if noRerank {
		first.Fields = req.Fields
	}
	if lazy {
		first.Fields = nil
	}
	// With first-stage feedback, the request's query finds the feedback
	// documents and the expanded query the window.
	expanded, err := x.pipeline.expand(ctx, x.base, req.Query, text)
	if err != nil {
		return nil, firstStageErr(err)
	}
	first.Query = expanded
	if !noRerank {
		// The stages' work on the query alone, beside the search.
		x.pipeline.prepareQueries(ctx, Query{Text: text})
	}
	// The window's cut and the page's, tied hits chosen as index.TopN does.
	res, err := index.SearchTiesByID(ctx, x.base, &first, w)
	if err != nil {
		return nil, firstStageErr(err)
	}
	// The window holds the same candidates, in the same order, as
	// index.TopN(window); hits beyond it keep Bleve's order, which does not
	// depend on how many were fetched, so pages agree with each other
	// (ordering them all by id would let tied hits cross the window's edge
	// as From+Size grows).
	index.StableOrder(res.Hits[:min(w, len(res.Hits))])
	if lazy {
		// By place in the list, so after ordering the window: a page
		// WithoutRerank can lie within it, and a page past the window
		// keeps its first-stage order when reranked.
		// The window's hits the stages read, and the page of the
		// first-stage list, which Result.First shows (semrank's server
		// compares it with the reranked page).
		fields := []string{"*"}
		if noRerank {
			fields = req.Fields
		}
		var reads []bool
		if !noRerank {
			window := res.Hits[:min(w, len(res.Hits))]
			var docless []bool
			if reads, docless, err = x.pipeline.windowDocs(ctx, index.HitIDs(window)); err != nil {
				return nil, firstStageErr(err)
			}
			// The stages that read no document start while the others'
			// documents load.
			x.pipeline.scoreAhead(ctx, Query{Text: text}, window, nil, reads, docless)
		}
		var need search.DocumentMatchCollection
		for i, h := range res.Hits {
			stages := i < len(reads) && reads[i]
			page := from >= 0 && len(req.Fields) > 0 && i >= from && i < end
			if stages || page {
				need = append(need, h)
			}
		}
		if err := index.FetchFields(ctx, x.base, fields, need); err != nil {
			return nil, firstStageErr(err)
		}
	}
	out := &Result{SearchResult: res, Reranked: !noRerank, FirstStageTook: time.Since(start),
		First: make([]FirstHit, len(res.Hits)), Details: make([]Detail, len(res.Hits))}
	for i, h := range res.Hits {
		// Reranking sets the hits' scores and fields: the first stage's
		// are kept here, the fields of the page's hits only.
		out.First[i] = FirstHit{ID: h.ID, Rank: i + 1, Score: h.Score, RerankedRank: i + 1, Fragments: h.Fragments}
		if i >= from && i < end {
			out.First[i].Fields = keepFields(h.Fields, req.Fields)
		}
	}
	if noRerank {
		for i, h := range res.Hits {
			x.place(h, i, req.Sort)
			out.Details[i] = Detail{FirstStageRank: i + 1, FirstStageScore: h.Score}
		}
		return out, nil
	}
	cands := x.pipeline.candidates(res.Hits)
	q := Query{Text: text}
	scored, err := x.pipeline.Rerank(ctx, q, cands)
	if err != nil {
		return nil, err
	}
	var fusion *fusionTerms
	if req.Explain {
		fusion = x.fusionTerms(scored)
	}
	hits := make(search.DocumentMatchCollection, 0, len(scored))
	for i, s := range scored {
		h := res.Hits[s.Rank-1] // by position: an alias may return one id twice
		if req.Explain {
			h.Expl = x.explain(s, i, h.Expl, fusion)
		}
		h.Score = s.Score
		x.place(h, i, req.Sort)
		h.Fields = keepFields(h.Fields, req.Fields)
		hits = append(hits, h)
		out.Details[i] = Detail{FirstStageRank: s.Rank, FirstStageScore: s.Candidate.Score, StageScores: s.StageScores}
		f := &out.First[s.Rank-1]
		f.RerankedRank, f.StageScores = i+1, s.StageScores
	}
	res.Hits = hits
	if lazy && from >= 0 && from < w && len(req.Fields) > 0 {
		// The page's hits within the window that no stage read.
		fetch := time.Now()
		if err := x.fetchMissing(ctx, req.Fields, hits[min(from, len(hits)):min(end, len(hits))]); err != nil {
			return nil, err
		}
		out.FirstStageTook += time.Since(fetch)
	}
	return out, nil
}

// fetchMissing loads the stored fields of the hits that carry none.
func (x *Index) fetchMissing(ctx context.Context, fields []string, hits search.DocumentMatchCollection) error {
	var need search.DocumentMatchCollection
	for _, h := range hits {
		if h.Fields == nil {
			need = append(need, h)
		}
	}
	return firstStageErr(index.FetchFields(ctx, x.base, fields, need))
}

// place marks h as the hit at position i of x's list for an IndexAlias
// merging it with other children's: its HitNumber (Bleve's would break
// ties in its own order) and, for a sort by score then _id, the sort
// values of so, the request's sort, which the alias compares for keys
// other than the score: the first stage was sorted by score alone.
func (x *Index) place(h *search.DocumentMatch, i int, so search.SortOrder) {
	h.HitNumber = x.hitNumber(i)
	if len(so) > 1 {
		// New slices: the first stage's may share a backing array
		// (Bleve's for a score sort does), which appending would write.
		// A score sort alone keeps the first stage's values, Bleve's
		// own for it ("_score", and no decoded values).
		h.Sort, h.DecodedSort = nil, nil
		so.Value(h)
	}
}

// cursor is where a SearchAfter or SearchBefore page of a request sorted
// by score (then perhaps _id) starts: the page holds the hits nearest to
// it after it in the list (below) or before it.
type cursor struct {
	score float64
	below bool
	asc   bool // the request sorts by ascending score
	// With a sort by score then _id, the cursor's id orders the hits
	// whose score equals its own, in the list's (descending-score) order
	// by ascending id, or descending with idDesc. Within one reranked list
	// no two hits tie; through an IndexAlias, hits of other children can
	// tie with the cursor's.
	id     string
	hasID  bool
	idDesc bool
}

// after reports whether h comes after the cursor in the list's order.
func (c cursor) after(h *search.DocumentMatch) bool {
	if h.Score != c.score {
		return h.Score < c.score
	}
	return c.hasID && (c.idDesc && h.ID < c.id || !c.idDesc && h.ID > c.id)
}

// before reports whether h comes before the cursor in the list's order.
func (c cursor) before(h *search.DocumentMatch) bool {
	if h.Score != c.score {
		return h.Score > c.score
	}
	return c.hasID && (c.idDesc && h.ID > c.id || !c.idDesc && h.ID < c.id)
}

// scoreCursor returns the cursor of req, a SearchAfter or SearchBefore
// page of a request sorted by score, or by score then _id, ascending or
// descending. IndexAlias asks its children for a SearchBefore page as a
// SearchAfter page in the reverse order, so both orders are pages of the
// reranked list. The error says the cursor's score is not a number; it
// matters only when the page is reranked (WithoutRerank leaves such a
// request to Bleve).
func scoreCursor(req *bleve.SearchRequest) (cursor, bool, error) {
	desc, id, ok := scoreSort(req.Sort)
	if !ok || len(req.Sort) == 0 || (len(req.SearchAfter) > 0) == (len(req.SearchBefore) > 0) {
		return cursor{}, false, nil
	}
	after := len(req.SearchAfter) > 0
	key := req.SearchAfter
	if !after {
		key = req.SearchBefore
	}
	if len(key) != len(req.Sort) {
		return cursor{}, false, nil
	}
	c := cursor{below: after == desc, asc: !desc}
	var err error
	if c.score, err = strconv.ParseFloat(key[0], 64); err != nil {
		// Bleve reads it as 0, which in a reranked list (whose scores
		// may be negative) is a place in the middle: a loop feeding a
		// hit's Sort back would get the same page again and again.
		err = fmt.Errorf("rerank: the cursor's score %q is not a number: give the hit's Score, strconv.FormatFloat(hit.Score, 'g', -1, 64), not its Sort value (Bleve's placeholder \"_score\")", key[0])
	}
	if id != nil {
		// The list runs by descending score; a reversed request (the
		// alias's SearchBefore) reverses its id order too.
		c.id, c.hasID, c.idDesc = key[1], true, id.Desc == desc
	}
	return c, true, err
}

// searchFrom answers req, a SearchAfter or SearchBefore page of a request
// sorted by score, or by score then _id (see scoreCursor), with the hits
// of the reranked list nearest c, as Bleve answers it from the
// first-stage list: the reranked list's scores are distinct and
// descending, so its cursor pages follow each other as From/Size pages do. From is ignored, as
// Bleve ignores it. The list is reranked once, with its window and
// req.Size hits past it, when the page lies within that; a page further
// down, in the tail below the window, reranks a list long enough again.
func (x *Index) searchFrom(ctx context.Context, req *bleve.SearchRequest, text string, c cursor, start time.Time) (*Result, error) {
	n := addSat(x.pipeline.WindowSize(), req.Size)
	var took time.Duration // the first stage's, over every list ranked
	for {
		res, err := x.ranked(ctx, req, text, -1, n, false)
		if err != nil {
			return nil, err
		}
		took += res.FirstStageTook
		res.FirstStageTook = took
		hits := res.Hits
		var lo, hi int
		if c.below {
			lo = sort.Search(len(hits), func(i int) bool { return c.after(hits[i]) })
			hi = addSat(lo, req.Size)
		} else {
			hi = sort.Search(len(hits), func(i int) bool { return !c.before(hits[i]) })
			lo = max(0, hi-req.Size)
		}
		if len(hits) < n || hi < len(hits) || c.below && hi == len(hits) {
			// ranked fetched the fields of the window's hits the
			// stages read; the page's others have none yet.
			if len(req.Fields) > 0 && req.Highlight == nil {
				fetch := time.Now()
				if err := x.fetchMissing(ctx, req.Fields, hits[min(lo, len(hits)):min(hi, len(hits))]); err != nil {
					return nil, err
				}
				res.FirstStageTook += time.Since(fetch)
			}
			return page(res, req, lo, hi, c.asc, start), nil
		}
		// The page reaches past the hits fetched: every hit there is
		// in the tail, whose scores step down from the last one's as
		// Pipeline.Rerank steps them (see explain). Fetch as far as
		// that says, and at least twice as far.
		m, s := len(hits), hits[len(hits)-1].Score
		for uint64(m) < res.Total && (c.below && s >= c.score || !c.below && s > c.score) {
			s = tailScore(s)
			m++
		}
		if c.below {
			m = addSat(m, req.Size)
		}
		n = max(m, addSat(n, n))
	}
}

// page cuts res, whose hits are the whole list from the first, to its
// hits [lo, hi), reversed for asc, as req's result of a search begun at
// start.
func page(out *Result, req *bleve.SearchRequest, lo, hi int, asc bool, start time.Time) *Result {
	res := out.SearchResult
	res.MaxScore = 0
	if len(res.Hits) > 0 {
		res.MaxScore = res.Hits[0].Score
	}
	lo, hi = min(lo, len(res.Hits)), min(hi, len(res.Hits))
	res.Hits = res.Hits[lo:hi]
	out.Details = out.Details[lo:hi]
	if asc {
		slices.Reverse(res.Hits)
		slices.Reverse(out.Details)
	}
	res.Request = req
	// Bleve's Took timed the first stage only.
	res.Took = time.Since(start)
	return out
}

// explain explains s, the hit at position i of the reranked list, around
// its first-stage explanation.
func (x *Index) explain(s Scored, i int, firstStage *search.Explanation, fusion *fusionTerms) *search.Explanation {
	first := &search.Explanation{Value: s.Candidate.Score, Message: "first stage"}
	if firstStage != nil {
		first.Children = []*search.Explanation{firstStage}
	}
	if w := x.pipeline.WindowSize(); i >= w {
		// Pipeline.Rerank leaves hits past the window in first-stage
		// order and only moves their scores below the window's.
		return &search.Explanation{
			Value: s.Score,
			Message: fmt.Sprintf("semrank: first-stage result at rank %d, below the rerank window of %d, not reranked; "+
				"score = previous hit's score − 1e-6·max(1, |previous hit's score|), which keeps first-stage order after every reranked hit", s.Rank, w),
			Children: []*search.Explanation{first},
		}
	}
	e := &search.Explanation{Value: s.Score, Message: fmt.Sprintf("semrank rerank of first-stage rank %d", s.Rank), Children: []*search.Explanation{first}}
	for j, st := range x.pipeline.Stages {
		if j < len(s.StageScores) {
			e.Children = append(e.Children, &search.Explanation{Value: s.StageScores[j], Message: "stage " + st.Name()})
		}
	}
	if f := fusion.explain(s.Rank); f != nil {
		e.Children = append(e.Children, f)
	}
	if sm := x.pipeline.Smooth; sm != nil {
		e.Children = append(e.Children, &search.Explanation{Value: s.Score,
			Message: sm.Name() + ": the window rescored from its fused scores after the fusion; the hit's score, nudged apart from ties"})
	}
	return e
}

// fusionTerms holds, for a linear fusion, each reranked candidate's
// features (z-normalised over the window, see Features) and the fusion's
// weights: the terms its fused score sums.
type fusionTerms struct {
	method  string // what the explanation calls the fusion
	names   []string
	weights []float64
	rows    map[int][]float64 // by first-stage rank
	then    string            // the step after the fusion, if any, which sets the hit's score
}

// fusionTerms recomputes the features and weights the fusion summed for
// the window of scored; nil for fusions whose scores are no sum of
// per-feature terms. It looks through fusions that wrap another (see
// Fusion).
func (x *Index) fusionTerms(scored []Scored) *fusionTerms {
	tf, ok := unwrapFusion(x.pipeline.Fusion).(termFusion)
	if !ok {
		return nil
	}
	in := x.pipeline.WindowInput(scored)
	names, rows, weights, err := tf.Terms(in)
	if err != nil {
		return nil // the search fused this window; it cannot fail now
	}
	t := &fusionTerms{method: "linear fusion", names: names, weights: weights, rows: make(map[int][]float64, len(rows))}
	if _, ok := tf.(*Agreement); ok {
		t.method = "agreement fusion (each weight its prior scaled by the feature's agreement with the others over the window)"
	}
	if sm := x.pipeline.Smooth; sm != nil {
		t.then = sm.Name()
	}
	for i, row := range rows {
		t.rows[in.Candidates[i].Rank] = row
	}
	return t
}

// explain returns the terms of the candidate at first-stage rank, one
// child per weighted feature; nil without a fusion of terms or outside
// the window.
func (t *fusionTerms) explain(rank int) *search.Explanation {
	if t == nil || t.rows[rank] == nil {
		return nil
	}
	e := &search.Explanation{Message: t.method + ": sum of weight × feature (z-normalised over the window); the hit's score is this sum, nudged apart from ties"}
	if t.then != "" {
		e.Message = t.method + ": sum of weight × feature (z-normalised over the window); the score " + t.then + " starts from"
	}
	for f, n := range t.names {
		if t.weights[f] == 0 {
			continue
		}
		z := t.rows[rank][f]
		e.Value += t.weights[f] * z
		e.Children = append(e.Children, &search.Explanation{Value: t.weights[f] * z, Message: fmt.Sprintf("%s: weight %.4g × z %.4g", n, t.weights[f], z)})
	}
	return e
}

// storedText returns a stored text field's value: a string, or the
// values of a field indexed from several strings (Bleve returns those as
// a []any), one a line. Other values hold no text.
func storedText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// candidateFields returns what stages read as a candidate's fields: the
// document's metadata, decoded from the stored meta field as index.TopN
// decodes it (nil without decode), or the hit's stored fields when it has
// none.
func candidateFields(stored map[string]any, decode bool) map[string]any {
	if _, ok := stored[index.FieldMeta].(string); !ok {
		return stored
	}
	if !decode {
		return nil
	}
	return index.StoredMeta(stored)
}

// keepFields returns the fields of have that want asks for, as Bleve
// returns them: nil when the document stores none of them, as for a hit
// whose fields searchFrom fetched (see index.FetchFields).
func keepFields(have map[string]any, want []string) map[string]any {
	if slices.Contains(want, "*") {
		return have
	}
	var out map[string]any
	for _, f := range want {
		if v, ok := have[f]; ok {
			if out == nil {
				out = make(map[string]any, len(want))
			}
			out[f] = v
		}
	}
	return out
}
