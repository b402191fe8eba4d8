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
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/cluster"
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
	// Partial reports that some of the index's parts did not answer (a
	// coordinator's shards, an alias's indexes): the hits are those of
	// the others, ranked with their statistics alone. Failed names each
	// part that did not answer, with its error.
	Partial bool              `json:"partial,omitempty"`
	Failed  map[string]string `json:"failed,omitempty"`

	firstStageTook time.Duration // for the metrics
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
	cur := s.current.Load()
	out, err := Search(r.Context(), s.idx, cur.pipeline, &req, s.limits)
	if out != nil {
		s.metrics.observeStage("first_stage", out.firstStageTook)
	}
	if err != nil {
		if cerr := r.Context().Err(); cerr != nil {
			return cerr
		}
		return err
	}
	out.Generation = cur.generation
	out.Took = time.Since(start)
	return writeJSON(w, http.StatusOK, out)
}

// Search answers req over idx with pipeline p, as POST /api/search
// answers it (semrank search --json prints the same): through rerank.Wrap,
// each hit with its first-stage rank and score and its stage scores as the
// query path computed them. A request out of l's bounds, or whose query
// cannot be run, is an error a 400 answers.
func Search(ctx context.Context, idx bleve.Index, p *rerank.Pipeline, req *SearchRequest, l Limits) (*SearchResponse, error) {
	start := time.Now()
	l = l.withDefaults()
	q, text, err := parseQuery(req.Query, p, idx.Mapping(), l)
	if err != nil {
		return nil, err
	}
	size := 10
	if req.Size != nil {
		size = *req.Size
	}
	switch {
	case size < 0 || size > l.MaxSize:
		return nil, badRequest("size %d is out of range: 0 to %d", size, l.MaxSize)
	case req.From < 0 || req.From > l.MaxFrom:
		return nil, badRequest("from %d is out of range: 0 to %d", req.From, l.MaxFrom)
	case len(req.Fields) > l.MaxFields:
		return nil, badRequest("%d fields asked for; the limit is %d", len(req.Fields), l.MaxFields)
	}
	for _, f := range req.Fields {
		if f == "" || len(f) > 256 || !utf8.ValidString(f) {
			return nil, badRequest("fields: %q is not a field name", f)
		}
	}
	enabled, compare := true, false
	pl := *p // a private copy: this request's window
	if o := req.Rerank; o != nil {
		if o.Enabled != nil {
			enabled = *o.Enabled
		}
		compare = o.Compare
		if o.Window < 0 || o.Window > l.MaxWindow {
			return nil, badRequest("rerank.window %d is out of range: 1 to %d (0 for the pipeline's %d)", o.Window, l.MaxWindow, p.WindowSize())
		}
		if o.Window > 0 {
			pl.Window = o.Window
		}
	}
	breq := bleve.NewSearchRequestOptions(q, size, req.From, req.Explain)
	breq.Fields = req.Fields
	if req.Highlight {
		breq.Highlight = bleve.NewHighlightWithStyle(highlighterName)
	}
	if !enabled {
		ctx = rerank.WithoutRerank(ctx)
	}
	if text != "" {
		ctx = rerank.WithQueryText(ctx, text)
	}
	res, err := rerank.Wrap(idx, &pl).SearchDetailed(ctx, breq)
	var fe *rerank.FirstStageError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, cluster.ErrNoShard):
		return nil, &apiError{Status: http.StatusServiceUnavailable, Header: map[string]string{"Retry-After": "1"}, Msg: err.Error()}
	case errors.As(err, &fe):
		if queryFault(ctx, idx, q) {
			return nil, badRequest("query cannot be run: %v", err)
		}
		return nil, fmt.Errorf("first-stage search: %w", err)
	default:
		return nil, err
	}
	names := pl.StageNames()
	stageScores := func(s []float64) map[string]float64 {
		if s == nil {
			return nil
		}
		out := make(map[string]float64, len(s))
		for j, name := range names {
			out[name] = s[j]
		}
		return out
	}
	out := &SearchResponse{Hits: make([]Hit, len(res.Hits)), TotalHits: res.Total, MaxScore: res.MaxScore,
		Reranked: res.Reranked, firstStageTook: res.FirstStageTook}
	if st := res.Status; st != nil && len(st.Errors) > 0 {
		out.Partial, out.Failed = true, make(map[string]string, len(st.Errors))
		for name, err := range st.Errors {
			out.Failed[name] = err.Error()
		}
	}
	if res.Reranked {
		out.Window = pl.WindowSize()
		out.Stages = names
	}
	for i, h := range res.Hits {
		d := res.Details[i]
		out.Hits[i] = Hit{ID: h.ID, Rank: req.From + i + 1, Score: h.Score, FirstStageRank: d.FirstStageRank, FirstStageScore: d.FirstStageScore,
			StageScores: stageScores(d.StageScores), Fields: h.Fields, Explanation: cleanExplanation(h.Expl, h.IndexInternalID), Fragments: h.Fragments}
	}
	out.Took = time.Since(start)
	if compare {
		for _, f := range res.First {
			if f.Rank <= req.From || f.Rank > req.From+size {
				continue
			}
			out.FirstStage = append(out.FirstStage, Hit{ID: f.ID, Rank: f.Rank, Score: f.Score, FirstStageRank: f.Rank, FirstStageScore: f.Score,
				RerankedRank: f.RerankedRank, StageScores: stageScores(f.StageScores), Fields: f.Fields, Fragments: f.Fragments})
		}
	}
	return out, nil
}

// queryFault reports whether a first-stage failure was the query's fault.
// Bleve checks some queries only when it builds their searcher (a regexp's
// syntax, a wildcard's expansion, a fuzziness): a query whose searcher
// cannot be built on the open index is a bad request. Anything else (a
// closed index, an I/O error while collecting hits) is the server's.
func queryFault(ctx context.Context, idx bleve.Index, q query.Query) bool {
	if _, err := idx.DocCount(); err != nil {
		return false // closed, or unreadable
	}
	adv, err := idx.Advanced()
	if err != nil {
		return false
	}
	r, err := adv.Reader()
	if err != nil {
		return false
	}
	defer r.Close()
	sr, err := q.Searcher(ctx, r, idx.Mapping(), search.SearcherOptions{})
	if err != nil {
		return true
	}
	sr.Close()
	return false
}

// parseQuery turns the request's query into a Bleve query: a JSON string is
// text, searched with the pipeline's first stage (Pipeline.Query) and
// returned as the text the stages compare candidates with; an object is a
// Bleve query, whose words the stages read (rerank.QueryText).
func parseQuery(raw json.RawMessage, p *rerank.Pipeline, m mapping.IndexMapping, l Limits) (query.Query, string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, "", badRequest("query is required: a string of text or a Bleve query object")
	}
	if len(raw) > l.MaxQueryBytes {
		return nil, "", badRequest("query is %d bytes; the limit is %d", len(raw), l.MaxQueryBytes)
	}
	switch raw[0] {
	case '"':
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, "", badRequest("query: %v", err)
		}
		if strings.TrimSpace(text) == "" {
			return nil, "", badRequest("query is empty")
		}
		q, err := p.Query(text)
		if errors.Is(err, index.ErrEmptyQuery) {
			return nil, "", badRequest("query %q has no searchable terms (only stop words or punctuation)", text)
		}
		return q, text, err
	case '{':
		q, err := parseQueryObject(raw)
		if err != nil {
			return nil, "", badRequest("query is not a Bleve query object: %v", err)
		}
		if err := checkQuery(q, m); err != nil {
			return nil, "", err
		}
		if v, ok := q.(query.ValidatableQuery); ok {
			if err := v.Validate(); err != nil {
				return nil, "", badRequest("query is not valid: %v", err)
			}
		}
		return q, "", nil
	}
	return nil, "", badRequest("query must be a string of text or a Bleve query object, not %s", raw[:min(len(raw), 20)])
}

// parseQueryObject is query.ParseQuery, with a panic in it returned as an
// error: Bleve's geo shape parsing indexes coordinates it has not checked
// (a point of one coordinate), and that is the client's malformed query.
func parseQueryObject(raw []byte) (q query.Query, err error) {
	err = parseBleve(func() error {
		q, err = query.ParseQuery(raw)
		return err
	})
	return q, err
}

// parseBleve runs parse, one of Bleve's parsers, returning a panic in it
// as an error.
func parseBleve(parse func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%v", v)
		}
	}()
	return parse()
}
