package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// SearchRequest is the body of POST /api/search: Bleve's search request
// fields plus rerank options.
//
//	{"query": "best bank in Doha", "size": 10, "fields": ["title"],
//	 "explain": true, "highlight": true,
//	 "rerank": {"enabled": true, "window": 50, "compare": true}}
type SearchRequest struct {
	// Query is natural-language text (a JSON string) or a Bleve query
	// object, e.g. {"match": "visa", "field": "title"} or Bleve's
	// query-string syntax {"query": "+visa renewal"}. A boost's
	// magnitude is at most MaxBoost, and a query string must parse and
	// hold a searchable term (400 otherwise).
	Query   json.RawMessage `json:"query"`
	Size    *int            `json:"size,omitempty"` // default 10
	From    int             `json:"from,omitempty"`
	Fields  []string        `json:"fields,omitempty"` // stored fields to return; "*" for all
	Explain bool            `json:"explain,omitempty"`
	// Highlight asks for each hit's fragments of title and text with the
	// query's words marked <mark>…</mark> (Bleve's HTML highlighter; the
	// text around the marks is HTML-escaped). A field's fragments are
	// chosen from its first 256 matches, so that a long field costs no
	// more than a short one: a field's later matches may go unmarked.
	Highlight bool           `json:"highlight,omitempty"`
	Rerank    *RerankOptions `json:"rerank,omitempty"`
}

// RerankOptions control the rerank pipeline for one search.
type RerankOptions struct {
	Enabled *bool `json:"enabled,omitempty"` // default true
	Window  int   `json:"window,omitempty"`  // candidates reranked; 0: the pipeline's
	// Compare adds the first-stage list of the same page to the answer.
	Compare bool `json:"compare,omitempty"`
}

// SearchResponse is the answer: Bleve's result fields plus where each hit
// came from.
type SearchResponse struct {
	Hits      []Hit         `json:"hits"`
	TotalHits uint64        `json:"total_hits"`
	MaxScore  float64       `json:"max_score"`
	Took      time.Duration `json:"took"` // nanoseconds, as Bleve's; the whole request's work
	// Reranked reports whether the hits went through the pipeline: true
	// unless the request set rerank.enabled to false, asked for no hits
	// (size 0: a count), or the query has no words for the stages
	// (rerank.QueryText: ids, ranges, match_all, wildcards alone), whose
	// hits keep Bleve's order. Window and Stages are
	// then its window (first-stage hits reranked) and its stage names, in
	// order.
	Reranked bool     `json:"reranked"`
	Window   int      `json:"window,omitempty"`
	Stages   []string `json:"stages,omitempty"`
	// Generation is the pipeline generation that answered (see Reload).
	Generation int `json:"generation"`
	// FirstStage is the first-stage list of the same page, when
	// rerank.compare was asked for.
	FirstStage []Hit `json:"first_stage,omitempty"`
}

// Hit is one result.
type Hit struct {
	ID    string  `json:"id"`
	Rank  int     `json:"rank"` // 1-based position in its list
	Score float64 `json:"score"`
	// FirstStageRank and FirstStageScore are the hit's BM25 rank and score.
	FirstStageRank  int     `json:"first_stage_rank"`
	FirstStageScore float64 `json:"first_stage_score"`
	// RerankedRank is the reranked position of a first-stage hit (in
	// SearchResponse.FirstStage only).
	RerankedRank int `json:"reranked_rank,omitempty"`
	// StageScores holds each stage's raw score; absent for hits outside
	// the rerank window.
	StageScores map[string]float64  `json:"stage_scores,omitempty"`
	Fields      map[string]any      `json:"fields,omitempty"`
	Explanation *search.Explanation `json:"explanation,omitempty"`
	// Fragments holds, with SearchRequest.Highlight, the highlighted
	// fragments of each field that matched.
	Fragments search.FieldFragmentMap `json:"fragments,omitempty"`
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) error {
	start := time.Now()
	var req SearchRequest
	if err := decodeBody(w, r, s.limits.MaxBodyBytes, &req); err != nil {
		return err
	}
	q, err := s.parseQuery(req.Query)
	if err != nil {
		return err
	}
	size := 10
	if req.Size != nil {
		size = *req.Size
	}
	l := s.limits
	switch {
	case size < 0 || size > l.MaxSize:
		return badRequest("size %d is out of range: 0 to %d", size, l.MaxSize)
	case req.From < 0 || req.From > l.MaxFrom:
		return badRequest("from %d is out of range: 0 to %d", req.From, l.MaxFrom)
	case len(req.Fields) > l.MaxFields:
		return badRequest("%d fields asked for; the limit is %d", len(req.Fields), l.MaxFields)
	}
	for _, f := range req.Fields {
		if f == "" || len(f) > 256 || !utf8.ValidString(f) {
			return badRequest("fields: %q is not a field name", f)
		}
	}
	enabled, compare := true, false
	cur := s.current.Load()
	p := *cur.pipeline // a private copy: this request's window and probes
	if o := req.Rerank; o != nil {
		if o.Enabled != nil {
			enabled = *o.Enabled
		}
		compare = o.Compare
		if o.Window < 0 || o.Window > l.MaxWindow {
			return badRequest("rerank.window %d is out of range: 1 to %d (0 for the pipeline's %d)", o.Window, l.MaxWindow, p.WindowSize())
		}
		if o.Window > 0 {
			p.Window = o.Window
		}
	}

	if size == 0 || strings.TrimSpace(rerank.QueryText(q)) == "" {
		// No hits to rerank (a count only), or nothing for the stages
		// to compare candidates with: Wrap passes the request through,
		// and the response says so.
		enabled = false
	}
	pr := &probe{metrics: s.metrics}
	p.Fusion = &recordFusion{inner: p.Fusion, probe: pr}
	x := rerank.Wrap(probeIndex{bleveIndex: s.idx, probe: pr}, &p)
	x.FirstStage = pr.hook
	breq := bleve.NewSearchRequestOptions(q, size, req.From, req.Explain)
	breq.Fields = req.Fields
	if req.Highlight {
		breq.Highlight = bleve.NewHighlightWithStyle(highlighterName)
	}
	ctx := r.Context()
	if !enabled {
		ctx = rerank.WithoutRerank(ctx)
	}
	res, err := x.SearchInContext(ctx, breq)
	pr.observe()
	pr.settle()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return ctx.Err()
	case pr.firstErr != nil:
		fault := s.queryFault(ctx, q)
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if fault {
			return badRequest("query cannot be run: %v", err)
		}
		return fmt.Errorf("first-stage search: %w", err)
	default:
		return err
	}

	out := SearchResponse{Hits: make([]Hit, len(res.Hits)), TotalHits: res.Total, MaxScore: res.MaxScore,
		Reranked: enabled, Generation: cur.generation}
	if enabled {
		out.Window = p.WindowSize()
		out.Stages = p.StageNames()
	}
	for i, h := range res.Hits {
		pos := req.From + i + 1
		hit := Hit{ID: h.ID, Rank: pos, Score: h.Score, Fields: h.Fields, Explanation: cleanExplanation(h.Expl, h.IndexInternalID), Fragments: h.Fragments}
		hit.FirstStageRank, hit.FirstStageScore = pos, h.Score
		if enabled {
			if f, ok := pr.first[h.ID]; ok {
				hit.FirstStageRank, hit.FirstStageScore = f.rank, f.score
			}
			hit.StageScores = pr.stageScores(h.ID)
		}
		out.Hits[i] = hit
	}
	if compare {
		out.FirstStage = pr.firstPage(req.From, size, req.Fields)
	}
	out.Took = time.Since(start)
	return writeJSON(w, http.StatusOK, out)
}

// queryFault reports whether a first-stage failure was the query's fault.
// Bleve checks some queries only when it builds their searcher (a regexp's
// syntax, a wildcard's expansion, a fuzziness): a query whose searcher
// cannot be built on the open index is a bad request. Anything else (a
// closed index, an I/O error while collecting hits) is the server's.
func (s *Server) queryFault(ctx context.Context, q query.Query) bool {
	if _, err := s.idx.DocCount(); err != nil {
		return false // closed, or unreadable
	}
	adv, err := s.idx.Advanced()
	if err != nil {
		return false
	}
	r, err := adv.Reader()
	if err != nil {
		return false
	}
	defer r.Close()
	sr, err := q.Searcher(ctx, r, s.idx.Mapping(), search.SearcherOptions{})
	if err != nil {
		return true
	}
	sr.Close()
	return false
}

// parseQuery turns the request's query into a Bleve query: a JSON string is
// text for semrank's BM25 text query, an object is a Bleve query.
func (s *Server) parseQuery(raw json.RawMessage) (query.Query, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, badRequest("query is required: a string of text or a Bleve query object")
	}
	if len(raw) > s.limits.MaxQueryBytes {
		return nil, badRequest("query is %d bytes; the limit is %d", len(raw), s.limits.MaxQueryBytes)
	}
	switch raw[0] {
	case '"':
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, badRequest("query: %v", err)
		}
		if strings.TrimSpace(text) == "" {
			return nil, badRequest("query is empty")
		}
		q, err := index.TextQuery(text)
		if errors.Is(err, index.ErrEmptyQuery) {
			return nil, badRequest("query %q has no searchable terms (only stop words or punctuation)", text)
		}
		return q, err
	case '{':
		q, err := parseQueryObject(raw)
		if err != nil {
			return nil, badRequest("query is not a Bleve query object: %v", err)
		}
		if err := checkQuery(q, s.idx.Mapping()); err != nil {
			return nil, err
		}
		if v, ok := q.(query.ValidatableQuery); ok {
			if err := v.Validate(); err != nil {
				return nil, badRequest("query is not valid: %v", err)
			}
		}
		return q, nil
	}
	return nil, badRequest("query must be a string of text or a Bleve query object, not %s", raw[:min(len(raw), 20)])
}

// parseQueryObject is query.ParseQuery, with a panic in it returned as an
// error: Bleve's geo shape parsing indexes coordinates it has not checked
// (a point of one coordinate), and that is the client's malformed query.
func parseQueryObject(raw []byte) (q query.Query, err error) {
	defer func() {
		if v := recover(); v != nil {
			q, err = nil, fmt.Errorf("%v", v)
		}
	}()
	return query.ParseQuery(raw)
}
