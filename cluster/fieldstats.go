package cluster

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// Fields implements bleve.Index: the fields of the documents of every
// shard that answers, sorted (an alias of several indexes gives none).
func (c *Coordinator) Fields() ([]string, error) {
	infos, errs := each(c.shards, func(r *Remote) (*Info, error) { return r.info(context.Background()) })
	var out []string
	answered := false
	for i, in := range infos {
		if errs[i] != nil {
			continue
		}
		answered = true
		for _, f := range in.Fields {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	if !answered {
		return nil, noShard(errs)
	}
	slices.Sort(out)
	return out, nil
}

// StatsFor implements rerank.FieldStatser: the collection's statistics
// over fields, counted as index.Stats counts them on one index of every
// document (a term's documents in _all and in each of fields, the
// largest of those counts), each field's count summed over the shards;
// and fields' analysis, the analyzer the collection's mapping gives
// fields[0]. Its Prepare fetches the counts of a search's terms in one
// request to each shard; the counts are kept while the shards' epochs
// stay the same.
func (c *Coordinator) StatsFor(fields []string) (rerank.TermStats, func(string) []string, error) {
	if len(fields) == 0 {
		return nil, nil, errors.New("cluster: statistics over no fields")
	}
	if err := index.CheckFields(c, fields...); err != nil {
		return nil, nil, err
	}
	if err := index.CheckStored(c, fields...); err != nil {
		return nil, nil, err
	}
	_, analyze, err := index.FieldAnalyzer(c.Mapping(), fields[0])
	if err != nil {
		return nil, nil, err
	}
	s := &fieldStats{c: c, fields: slices.Clone(fields), tokens: analyzers.NewCache(analyze)}
	return s, s.tokens.Tokens, nil
}

// fieldStats are a collection's statistics over fields of its own
// (StatsFor).
type fieldStats struct {
	c      *Coordinator
	fields []string
	tokens *analyzers.Cache

	mu  sync.Mutex
	key string            // the shards' state df was counted in
	df  map[string]uint64 // a term's count (see StatsFor)
}

// DocCount implements rerank.TermStats.
func (s *fieldStats) DocCount() (uint64, error) { return s.c.DocCount() }

// DocFreq implements rerank.TermStats: the term's count, fetched alone
// when Prepare did not.
func (s *fieldStats) DocFreq(term string) (uint64, error) {
	if n, ok := s.cached(term); ok {
		return n, nil
	}
	df, err := s.fetch(context.Background(), []string{term})
	return df[term], err
}

// Prepare implements rerank.Preparer: it fetches the counts of the
// query's and the candidates' terms not kept yet, in one request to each
// shard.
func (s *fieldStats) Prepare(ctx context.Context, q rerank.Query, cands []rerank.Candidate) error {
	want := map[string]bool{}
	add := func(text string) {
		for _, t := range s.tokens.Tokens(text) {
			if _, ok := s.cached(t); !ok {
				want[t] = true
			}
		}
	}
	add(q.Text)
	for _, cd := range cands {
		add(cd.FullText())
	}
	if len(want) == 0 {
		return nil
	}
	terms := make([]string, 0, len(want))
	for t := range want {
		terms = append(terms, t)
	}
	_, err := s.fetch(ctx, terms)
	return err
}

// cached returns the kept count of term, if it is kept for the shards'
// current state.
func (s *fieldStats) cached(term string) (uint64, bool) {
	key := s.c.viewKey()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key != key {
		return 0, false
	}
	n, ok := s.df[term]
	return n, ok
}

// fetch asks the shards for the counts of terms, and returns and keeps
// them.
func (s *fieldStats) fetch(ctx context.Context, terms []string) (map[string]uint64, error) {
	sums, key, err := s.c.docFreqs(ctx, DocFreqBody{Terms: terms, Fields: s.fields})
	if err != nil {
		return nil, err
	}
	df := make(map[string]uint64, len(terms))
	for _, t := range terms {
		var n uint64
		for _, m := range sums {
			n = max(n, m[t])
		}
		df[t] = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.df == nil || s.key != key || len(s.df)+len(df) > dfCacheMax {
		s.key, s.df = key, make(map[string]uint64, len(df))
	}
	for t, n := range df {
		s.df[t] = n
	}
	return df, nil
}

var (
	_ rerank.FieldStatser = (*Coordinator)(nil)
	_ rerank.Preparer     = (*fieldStats)(nil)
)

// viewKey returns the key of the shards' state at the latest presearch.
func (c *Coordinator) viewKey() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view.key
}
