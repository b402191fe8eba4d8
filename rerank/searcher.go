package rerank

import (
	"context"
	"errors"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/index"
)

// Searcher is semrank's query path over any Bleve index: a first-stage
// Bleve search, its window of candidates read from the stored fields the
// pipeline names (Pipeline.Fields), the stages, and the fusion. semrank
// search, run and rerank, the recipes and the fusion trainer search
// through it, and Wrap answers bleve.SearchRequests with the same steps,
// so one pipeline ranks alike everywhere.
type Searcher struct {
	Index    bleve.Index
	Pipeline *Pipeline
}

// Search returns the first max(n, window) hits for q reranked: the
// window's by fused score, each carrying its first-stage rank and score
// (Candidate) and every stage's score, then the hits past the window in
// first-stage order. first is the first-stage query; nil means
// Pipeline.Query(q.Text). A query text without searchable terms gives no
// hits.
func (s Searcher) Search(ctx context.Context, q Query, first query.Query, n int) ([]Scored, error) {
	cands, err := s.Candidates(ctx, q, first, n)
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	return s.Pipeline.Rerank(ctx, q, cands)
}

// Candidates returns the first max(n, window) first-stage candidates for
// q, as Search reranks them: tied scores at the window's cut chosen by id
// (index.SearchTiesByID), the window's scores rounded and ordered as
// index.StableOrder orders them.
func (s Searcher) Candidates(ctx context.Context, q Query, first query.Query, n int) ([]Candidate, error) {
	first, err := s.first(q, first)
	if err != nil || first == nil {
		return nil, err
	}
	w := s.Pipeline.WindowSize()
	req := bleve.NewSearchRequestOptions(first, max(n, w), 0, false)
	req.Fields = []string{"*"}
	res, err := index.SearchTiesByID(ctx, s.Index, req, w)
	if err != nil {
		return nil, err
	}
	index.StableOrder(res.Hits[:min(w, len(res.Hits))])
	return s.Pipeline.candidates(res.Hits), nil
}

// Given reranks exactly the documents ids, a given candidate list (such as
// SemEval's search-engine order): scored by the first stage, the matching
// ones first (see index.GivenHits), each candidate carrying its place in
// ids as GivenRank.
func (s Searcher) Given(ctx context.Context, q Query, first query.Query, ids []string) ([]Scored, error) {
	cands, err := s.GivenCandidates(ctx, q, first, ids)
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	return s.Pipeline.Rerank(ctx, q, cands)
}

// GivenCandidates returns the candidates Given reranks.
func (s Searcher) GivenCandidates(ctx context.Context, q Query, first query.Query, ids []string) ([]Candidate, error) {
	first, err := s.first(q, first)
	if err != nil {
		return nil, err
	}
	hits, given, err := index.GivenHits(ctx, s.Index, first, ids, []string{"*"})
	if err != nil {
		return nil, err
	}
	cands := s.Pipeline.candidates(hits)
	for i := range cands {
		cands[i].GivenRank = given[i]
	}
	return cands, nil
}

// first returns the first-stage query: first, or the pipeline's query for
// q's text; nil when that text has no searchable terms.
func (s Searcher) first(q Query, first query.Query) (query.Query, error) {
	if first != nil {
		return first, nil
	}
	first, err := s.Pipeline.Query(q.Text)
	if errors.Is(err, index.ErrEmptyQuery) {
		return nil, nil
	}
	return first, err
}

// candidates returns the candidates of first-stage hits, in their order.
func (p *Pipeline) candidates(hits search.DocumentMatchCollection) []Candidate {
	out := make([]Candidate, len(hits))
	for i, h := range hits {
		out[i] = p.Fields.candidate(h, i+1)
	}
	return out
}
