package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"

	"github.com/semrank/semrank/index"
)

// A search for the first k hits by score asks each shard for its first k,
// though with documents spread by hash each holds about k/N of them: most
// of what the shards send is dropped at the merge. search asks each for
// a little more than its share instead (shareOf), and makes sure it was
// enough: a shard that sent all it was asked for may hold more of the
// first k only if the lowest score it sent is not below the k-th of the
// merged list (compared as index.StableScore rounds them, which is how
// the first stage tells ties apart). Otherwise every hit it did not send
// scores below the k-th, so the merged first k are the same hits as with
// k from every shard; when one shard fails that test, the search is made
// again with k from each.

// shareOf returns how many hits to ask each of n shards for when the
// first k are wanted: half again its share, and 8 more; 0 (all k) when
// that saves little.
func shareOf(k, n int) int {
	if n < 2 || k < 16 {
		return 0
	}
	m := int(math.Ceil(1.5*float64(k)/float64(n))) + 8
	if m >= k {
		return 0
	}
	return m
}

// limitable reports whether req's first hits may be gathered from the
// shards' shares: a search by descending score alone, from the top,
// without facets (whose counts are the shards' whole lists anyway, but
// whose terms a short list could miss).
func limitable(req *bleve.SearchRequest) bool {
	if req.Size <= 0 || req.Score == bleve.ScoreNone || len(req.Facets) > 0 || len(req.SearchAfter) > 0 || len(req.SearchBefore) > 0 || len(req.Sort) > 1 {
		return false
	}
	if len(req.Sort) == 1 {
		s, ok := req.Sort[0].(*search.SortScore)
		return ok && s.Desc
	}
	return true
}

// sent is what one shard sent for a search of its share.
type sent struct {
	hits   int
	lowest float64 // the lowest score sent
	total  uint64  // the shard's hits in all
}

// search runs req over the alias with st's statistics: each shard asked
// for its share of the first hits when that is safe (limitable), and
// again for all of them when a shard's share may have fallen short.
func (c *Coordinator) search(ctx context.Context, st *searchState, req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	k := req.From + req.Size
	st.share = 0
	if limitable(req) {
		st.share = shareOf(k, len(c.shards))
	}
	ctx = context.WithValue(ctx, stateKey{}, st)
	res, err := c.IndexAlias.SearchInContext(ctx, req)
	if err != nil || st.share == 0 || st.enough(res, req) {
		return res, err
	}
	st.share = 0
	return c.IndexAlias.SearchInContext(ctx, req)
}

// enough reports whether every shard that sent all of its share holds no
// other hit that could be on res's page, the hits [From, From+Size) of
// the merged list (see search).
func (s *searchState) enough(res *bleve.SearchResult, req *bleve.SearchRequest) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.sent {
		if a.hits < s.share || a.total <= uint64(a.hits) {
			continue // it sent every hit it has
		}
		if len(res.Hits) < req.Size || index.StableScore(a.lowest) >= index.StableScore(res.Hits[len(res.Hits)-1].Score) {
			return false
		}
	}
	return true
}

// shareOfRequest returns req as a shard is asked it: for no more than
// the state's share of hits.
func (s *searchState) shareOfRequest(req *bleve.SearchRequest) *bleve.SearchRequest {
	if s == nil || s.share == 0 || req.Size+req.From <= s.share {
		return req
	}
	out := *req
	out.From, out.Size = 0, s.share
	return &out
}

// body returns the body of a shard's search of req, a child's copy of
// the request an alias scatters: the state's share of it, with the
// collection's statistics. Every shard of one scatter is sent the same,
// so it is encoded once for them all (for each share the state asks).
func (s *searchState) body(req *bleve.SearchRequest) (json.RawMessage, error) {
	if s == nil {
		return json.Marshal(SearchBody{Request: req})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.bodies[s.share]; ok {
		return b, nil
	}
	b, err := json.Marshal(SearchBody{Request: s.shareOfRequest(req), Stats: s.stats})
	if err != nil {
		return nil, fmt.Errorf("cluster: encoding a shard's search: %w", err)
	}
	if s.bodies == nil {
		s.bodies = map[int]json.RawMessage{}
	}
	s.bodies[s.share] = b
	return b, nil
}

// answered records a shard's answer to a search: the epoch of its index,
// and what it sent.
func (s *searchState) answered(name, epoch string, res *bleve.SearchResult) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen, s.sent = map[string]string{}, map[string]sent{}
	}
	s.seen[name] = epoch
	a := sent{hits: len(res.Hits), total: res.Total}
	if len(res.Hits) > 0 {
		a.lowest = res.Hits[len(res.Hits)-1].Score
	}
	s.sent[name] = a
}
