package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// Coordinator searches a collection's shards as one index: a bleve.Index
// over a bleve.IndexAlias of Remote shards, in shard order (shard I of N
// at position I, as semrank index --shard I/N built it). Every shard is
// searched with the collection's statistics for the query's terms, the
// sums of the shards' (WithStats), so BM25 scores are those of one index
// of every document; they come from a presearch of every shard, or from
// the cache of an earlier one while the shards' epochs stay the same
// (SearchInContext). The alias merges the shards' hits. rerank.Wrap over a Coordinator reranks the merged
// window once, its lexical stages reading the shards' summed document
// frequencies (Coordinator implements rerank.TermStats and Preparer).
//
// A shard that does not answer in time makes the answer partial: the
// alias's SearchResult.Status lists it as failed, with its error, and the
// statistics are those of the shards that answered.
//
// A Coordinator keeps no state of its own: the dictionary sizes and
// document frequencies it has gathered are a cache, kept while every
// shard's epoch stays the same, so coordinators can be replicated and
// restarted freely.
type Coordinator struct {
	bleve.IndexAlias
	shards []*Remote

	// What is cached, for the shards' state at the latest presearch
	// (view): every field's dictionary size over the shards, term
	// document frequencies by field, and payloads.
	mu      sync.Mutex
	view    view
	dicts   map[string]int
	df      map[string]map[string]uint64
	dfTerms int // terms in df
	pay     payloadCache
	// prepared holds the documents whose terms' frequencies df holds.
	prepared map[string]bool
}

// view is what the latest presearch learned: the shards' epochs ("-"
// for a shard that did not answer) and, joined, the key of what is
// cached for them; which shards answered; and how many documents they
// hold.
type view struct {
	key    string
	epochs []string
	live   []bool
	docs   uint64
}

// Options configure a Coordinator.
type Options struct {
	// Timeout bounds each call to a shard; a shard that takes longer is
	// reported as failed. Zero means 5 seconds.
	Timeout time.Duration
	// Client is the HTTP client; nil means one that keeps up to 256 idle
	// connections to each shard.
	Client *http.Client
	// Token is sent as a bearer token with writes to the shards (their
	// --admin-token).
	Token string
}

// ErrNoShard is the error of a coordinator none of whose shards answers.
var ErrNoShard = errors.New("cluster: no shard answered")

// noShard returns ErrNoShard with the shards' errors.
func noShard(errs []error) error {
	return fmt.Errorf("%w: %w", ErrNoShard, errors.Join(errs...))
}

// dfCacheMax bounds the document frequencies cached.
const dfCacheMax = 1 << 20

// NewCoordinator returns the coordinator of the shards at urls, in shard
// order. It reads the index mapping from the shards that answer, which
// must agree, and refuses a shard whose index records another place
// (MarkShard) than its position among urls; at least one must answer.
func NewCoordinator(ctx context.Context, urls []string, o Options) (*Coordinator, error) {
	if len(urls) == 0 {
		return nil, errors.New("cluster: no shards")
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Client == nil {
		// net/http's default keeps 2 idle connections a host: concurrent
		// searches would open a connection to every shard each time.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 256
		o.Client = &http.Client{Transport: t}
	}
	c := &Coordinator{dicts: map[string]int{}}
	seen := map[string]bool{}
	for _, u := range urls {
		r, err := NewRemote(u, o.Client, o.Timeout, o.Token)
		if err != nil {
			return nil, err
		}
		if seen[r.url] {
			return nil, fmt.Errorf("cluster: shard %s is listed twice", r.url)
		}
		seen[r.url] = true
		c.shards = append(c.shards, r)
	}
	infos, errs := each(c.shards, func(r *Remote) (*Info, error) { return r.info(ctx) })
	var raw json.RawMessage
	var from string
	for i, in := range infos {
		if errs[i] != nil {
			continue
		}
		if want := fmt.Sprintf("%d/%d", i, len(urls)); in.Shard != "" && in.Shard != want {
			return nil, fmt.Errorf("cluster: %s serves shard %s, but is listed as shard %s: list the shards in order, shard I at position I (0-based), all N of them", c.shards[i].name, in.Shard, want)
		}
		if raw == nil {
			raw, from = in.Mapping, c.shards[i].name
		} else if !bytes.Equal(raw, in.Mapping) {
			return nil, fmt.Errorf("cluster: shards %s and %s have different index mappings: a collection's shards are built alike (semrank index --shard)", from, c.shards[i].name)
		}
	}
	if raw == nil {
		return nil, noShard(errs)
	}
	var m mapping.IndexMappingImpl
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("cluster: shard %s's index mapping: %w", from, err)
	}
	children := make([]bleve.Index, len(c.shards))
	for i, r := range c.shards {
		r.mapping = &m
		children[i] = r
	}
	alias := bleve.NewIndexAlias(children...)
	if err := alias.SetIndexMapping(&m); err != nil {
		return nil, err
	}
	c.IndexAlias = alias
	return c, nil
}

// Shards returns the shards' names (their URLs), in shard order.
func (c *Coordinator) Shards() []string {
	out := make([]string, len(c.shards))
	for i, r := range c.shards {
		out[i] = r.name
	}
	return out
}

// each calls fn for every shard at once and returns its answers and
// errors, in shard order.
func each[T any](shards []*Remote, fn func(*Remote) (T, error)) ([]T, []error) {
	out := make([]T, len(shards))
	errs := make([]error, len(shards))
	var wg sync.WaitGroup
	for i, r := range shards {
		wg.Go(func() { out[i], errs[i] = fn(r) })
	}
	wg.Wait()
	return out, errs
}

// stateKey is the context key of a search's searchState.
type stateKey struct{}

// searchState is the statistics a Coordinator's search sends its shards,
// and what the shards' answers said of their state.
type searchState struct {
	stats *Stats
	v     view             // the shards' state the statistics are of
	fail  map[string]error // shards that failed the presearch, by name

	// share is the hits each shard is asked for at most (search); 0
	// for all the search asks for.
	share int

	mu     sync.Mutex
	seen   map[string]string       // each answering shard's epoch, by name
	sent   map[string]sent         // what each answering shard sent, by name
	bodies map[int]json.RawMessage // the shards' search bodies, by share (body)
}

// failed returns the presearch error of shard name, if it failed.
func (s *searchState) failed(name string) error {
	if s == nil {
		return nil
	}
	return s.fail[name]
}

// collection returns the collection's statistics, nil when none were
// gathered.
func (s *searchState) collection() *Stats {
	if s == nil {
		return nil
	}
	return s.stats
}

// SearchInContext implements bleve.Index: the alias's search of every
// shard with the collection's statistics for req's query. Those come
// from the statistics cached for the shards' epochs when they hold every
// term the query reads (a query by terms, whose terms the coordinator
// finds itself: queryTerms), else from a presearch; every shard answers
// with its epoch, and when one moved (a write, a shard back or gone)
// since the cached statistics, they are dropped and the search is made
// again after a presearch.
func (c *Coordinator) SearchInContext(ctx context.Context, req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	if req == nil || !readsTerms(req.Query) {
		return c.IndexAlias.SearchInContext(ctx, req)
	}
	st := c.cached(req.Query)
	for fresh := st == nil; ; fresh = true {
		if fresh {
			var err error
			if st, err = c.presearch(ctx, req.Query); err != nil {
				return nil, err
			}
		}
		res, err := c.search(ctx, st, req)
		if err != nil || fresh || !c.moved(st, res) {
			return res, err
		}
	}
}

// moved reports whether a shard's state differs from the one st's
// statistics are of: its epoch moved, it answered though it had failed
// or failed though it had answered. The cached statistics are then
// dropped.
func (c *Coordinator) moved(st *searchState, res *bleve.SearchResult) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i, r := range c.shards {
		if e, ok := st.seen[r.name]; ok != st.v.live[i] || ok && e != st.v.epochs[i] {
			c.setView(view{})
			return true
		}
	}
	return false
}

// Search implements bleve.Index.
func (c *Coordinator) Search(req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	return c.SearchInContext(context.Background(), req)
}

// readsTerms reports whether q's scores may read term statistics: not
// for queries by id or of every or no document, which FetchFields and
// paging send.
func readsTerms(q query.Query) bool {
	switch q.(type) {
	case nil, *query.DocIDQuery, *query.MatchAllQuery, *query.MatchNoneQuery:
		return false
	}
	return true
}

// cached returns the state of a search of q from the cached statistics,
// nil when they lack one q reads, or q reads terms only the shards'
// dictionaries know.
func (c *Coordinator) cached(q query.Query) *searchState {
	terms, ok := queryTerms(q, c.Mapping())
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.view.key == "" {
		return nil
	}
	st := &searchState{stats: &Stats{Docs: c.view.docs, Fields: make(map[string]*FieldStats, len(terms))}, v: c.view}
	for field, ts := range terms {
		n, ok := c.dicts[field]
		if !ok {
			return nil
		}
		f := &FieldStats{Terms: n, DocFreq: make(map[string]uint64, len(ts))}
		for _, t := range ts {
			if f.DocFreq[t], ok = c.df[field][t]; !ok {
				return nil
			}
		}
		st.stats.Fields[field] = f
	}
	return st
}

// presearch gathers the collection's statistics for q: the shards'
// document counts and term document counts summed, and the size of the
// union of their dictionaries; and caches them, for the shards' epochs.
// Shards that do not answer are left out, and named in the state's
// failures.
func (c *Coordinator) presearch(ctx context.Context, q query.Query) (*searchState, error) {
	raw, err := json.Marshal(q)
	if err != nil {
		return nil, fmt.Errorf("cluster: encoding the query: %w", err)
	}
	answers, errs := each(c.shards, func(r *Remote) (*ShardStats, error) {
		var s ShardStats
		return &s, r.call(ctx, http.MethodPost, "/api/shard/presearch", PresearchBody{Query: raw}, &s)
	})
	st := &searchState{stats: &Stats{}, fail: map[string]error{}}
	v := view{live: make([]bool, len(c.shards)), epochs: make([]string, len(c.shards))}
	for i, a := range answers {
		if errs[i] != nil {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			st.fail[c.shards[i].name] = errs[i]
			v.epochs[i] = "-"
			continue
		}
		v.live[i] = true
		v.epochs[i] = a.Epoch
		st.stats.add(&a.Stats)
	}
	if len(st.fail) == len(c.shards) {
		return nil, noShard(errs)
	}
	v.key = strings.Join(v.epochs, " ")
	v.docs = st.stats.Docs
	st.v = v
	c.setView(v)
	for name, f := range st.stats.Fields {
		if f.Terms, err = c.dictSize(ctx, name, v); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.view.key == v.key {
		for name, f := range st.stats.Fields {
			c.cacheDocFreq(name, f.DocFreq)
		}
	}
	return st, nil
}

// cacheDocFreq caches the document frequencies of field's terms, within
// dfCacheMax terms. c.mu is held.
func (c *Coordinator) cacheDocFreq(field string, df map[string]uint64) {
	if c.df == nil || c.dfTerms+len(df) > dfCacheMax {
		c.df, c.dfTerms, c.prepared = map[string]map[string]uint64{}, 0, nil
	}
	m := c.df[field]
	if m == nil {
		m = make(map[string]uint64, len(df))
		c.df[field] = m
	}
	for t, n := range df {
		if _, ok := m[t]; !ok {
			c.dfTerms++
		}
		m[t] = n
	}
}

// setView records v as the shards' state; when their epochs moved, what
// was cached for the earlier state goes.
func (c *Coordinator) setView(v view) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v.key != c.view.key {
		c.df, c.dfTerms, c.dicts, c.pay, c.prepared = nil, 0, map[string]int{}, payloadCache{}, nil
	}
	c.view = v
}

// dictSize returns the size of the union of field's dictionaries over the
// live shards of v: what one index of the collection, merged into one
// segment, reports as the field's cardinality (see FieldStats.Terms).
// Gathering it reads every dictionary, so it is kept while the shards'
// epochs stay the same.
func (c *Coordinator) dictSize(ctx context.Context, field string, v view) (int, error) {
	c.mu.Lock()
	n, ok := c.dicts[field]
	same := c.view.key == v.key // under the lock: setView writes it
	c.mu.Unlock()
	if ok && same {
		return n, nil
	}
	union := map[string]struct{}{}
	var mu sync.Mutex
	var live []*Remote
	for i, r := range c.shards {
		if v.live[i] {
			live = append(live, r)
		}
	}
	_, errs := each(live, func(r *Remote) (struct{}, error) {
		terms, err := r.terms(ctx, field)
		mu.Lock()
		for _, t := range terms {
			union[t] = struct{}{}
		}
		mu.Unlock()
		return struct{}{}, err
	})
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("cluster: reading the shards' dictionaries of %s: %w", field, err)
	}
	c.mu.Lock()
	if c.view.key == v.key {
		c.dicts[field] = len(union)
	}
	c.mu.Unlock()
	return len(union), nil
}

// terms returns the terms of field's dictionary on the shard.
func (r *Remote) terms(ctx context.Context, field string) ([]string, error) {
	var out []string
	err := r.call(ctx, http.MethodGet, "/api/shard/terms?field="+url.QueryEscape(field), nil, &out)
	return out, err
}

// StageEnv implements rerank.EnvIndex: the stages read the shards'
// summed statistics and the window's payloads, fetched from their shards
// (FetchPayloads), and analyze text as semrank's shards do.
func (c *Coordinator) StageEnv() rerank.Env {
	return rerank.Env{Index: c, Stats: c, Payloads: c, Analyze: analyzers.CachedTokens, Semrank: true}
}

// DocCount implements bleve.Index and rerank.TermStats: the documents of
// the shards that answered the latest presearch; before any, of the
// shards that answer now (an error when none does).
func (c *Coordinator) DocCount() (uint64, error) {
	c.mu.Lock()
	v := c.view
	c.mu.Unlock()
	if v.key != "" {
		return v.docs, nil
	}
	infos, errs := each(c.shards, func(r *Remote) (*Info, error) { return r.info(context.Background()) })
	var n uint64
	answered := false
	for i, in := range infos {
		if errs[i] == nil {
			n, answered = n+in.Docs, true
		}
	}
	if !answered {
		return 0, noShard(errs)
	}
	return n, nil
}

// DocFreq implements rerank.TermStats: the number of documents of the
// shards that answered the latest presearch that hold the analyzed
// term, summed over them. Prepare fetches the terms a search's stages
// read in one round trip; a term it did not is fetched alone.
func (c *Coordinator) DocFreq(term string) (uint64, error) {
	c.mu.Lock()
	n, ok := c.df[DocFreqField][term]
	c.mu.Unlock()
	if ok {
		return n, nil
	}
	df, err := c.fetchDocFreq(context.Background(), []string{term})
	return df[term], err
}

// Prepare implements rerank.Preparer: it fetches the document frequency
// of every term of the query and of the candidates (their terms
// payloads', else their text's) that is not cached yet, in one request
// to each shard.
func (c *Coordinator) Prepare(ctx context.Context, q rerank.Query, cands []rerank.Candidate) error {
	want := map[string]bool{}
	for _, t := range analyzers.CachedTokens(q.Text) {
		want[t] = true
	}
	c.mu.Lock()
	key := c.view.key
	var ids []string
	for _, cd := range cands {
		if !c.prepared[cd.ID] {
			ids = append(ids, cd.ID)
		}
	}
	c.mu.Unlock()
	for _, cd := range cands {
		if slices.Contains(ids, cd.ID) {
			c.termsOf(cd, func(t string) { want[t] = true })
		}
	}
	var missing []string
	c.mu.Lock()
	for t := range want {
		if _, ok := c.df[DocFreqField][t]; !ok {
			missing = append(missing, t)
		}
	}
	c.mu.Unlock()
	if len(missing) > 0 {
		if _, err := c.fetchDocFreq(ctx, missing); err != nil {
			return err
		}
	}
	// The candidates whose every term is now cached need not be read
	// again while the shards stay as they are.
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.view.key == key && c.df != nil {
		if c.prepared == nil || len(c.prepared)+len(ids) > payloadCacheMax {
			c.prepared = map[string]bool{}
		}
		for _, id := range ids {
			c.prepared[id] = true
		}
	}
	return nil
}

// fetchDocFreq asks the shards that answered the latest presearch how
// many of their documents hold each of terms, and returns and caches the
// sums.
func (c *Coordinator) fetchDocFreq(ctx context.Context, terms []string) (map[string]uint64, error) {
	sums, key, err := c.docFreqs(ctx, DocFreqBody{Terms: terms})
	if err != nil {
		return nil, err
	}
	df := sums[DocFreqField]
	if df == nil {
		df = make(map[string]uint64, len(terms))
	}
	for _, t := range terms {
		if _, ok := df[t]; !ok {
			df[t] = 0 // no shard counted it: no document holds it
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.view.key == key {
		c.cacheDocFreq(DocFreqField, df)
	}
	return df, nil
}

// docFreqs sends body to the shards that answered the latest presearch
// and returns their counts summed, by field and term, with the key of
// the shards' state they were asked in.
func (c *Coordinator) docFreqs(ctx context.Context, body DocFreqBody) (map[string]map[string]uint64, string, error) {
	c.mu.Lock()
	v := c.view
	c.mu.Unlock()
	var live []*Remote
	for i, r := range c.shards {
		if v.live == nil || v.live[i] {
			live = append(live, r)
		}
	}
	answers, errs := each(live, func(r *Remote) (*ShardStats, error) {
		var s ShardStats
		return &s, r.call(ctx, http.MethodPost, "/api/shard/docfreq", body, &s)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, "", fmt.Errorf("cluster: document frequencies: %w", err)
	}
	sums := map[string]map[string]uint64{}
	for _, a := range answers {
		for field, f := range a.Fields {
			if f == nil {
				continue
			}
			m := sums[field]
			if m == nil {
				m = make(map[string]uint64, len(f.DocFreq))
				sums[field] = m
			}
			for t, n := range f.DocFreq {
				m[t] += n
			}
		}
	}
	return sums, v.key, nil
}

// DocFreqField is the field a shard's docfreq counts terms in: semrank's
// composite field, as index.Index.DocFreq counts them.
const DocFreqField = "_all"

// Write sends each added and deleted document to the shard its id hashes
// to (Of), as one /api/index request per shard, and returns the shards'
// answers summed. A shard's failure is returned naming it; the other
// shards' writes stand.
func (c *Coordinator) Write(ctx context.Context, add []dataset.Doc, del []string) (*WriteResult, error) {
	n := len(c.shards)
	parts := make([]writeBody, n)
	for _, d := range add {
		s := Of(d.ID, n)
		parts[s].Add = append(parts[s].Add, d)
	}
	for _, id := range del {
		s := Of(id, n)
		parts[s].Delete = append(parts[s].Delete, id)
	}
	var send []*Remote
	var bodies []writeBody
	for i, p := range parts {
		if len(p.Add)+len(p.Delete) > 0 {
			send = append(send, c.shards[i])
			bodies = append(bodies, p)
		}
	}
	at := map[*Remote]writeBody{}
	for i, r := range send {
		at[r] = bodies[i]
	}
	answers, errs := each(send, func(r *Remote) (*WriteResult, error) {
		var w WriteResult
		return &w, r.call(ctx, http.MethodPost, "/api/index", at[r], &w)
	})
	out := &WriteResult{}
	var failed []error
	for i, a := range answers {
		if errs[i] != nil {
			failed = append(failed, errs[i])
			continue
		}
		out.Added += a.Added
		out.Deleted += a.Deleted
		out.Missing = append(out.Missing, a.Missing...)
		out.Payloads = a.Payloads
		out.Shards = append(out.Shards, send[i].name)
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("cluster: writing to %d of %d shards failed (the others' writes stand): %w", len(failed), len(send), errors.Join(failed...))
	}
	return out, nil
}

// writeBody is a shard's part of a write: its /api/index request.
type writeBody struct {
	Add    []dataset.Doc `json:"add,omitempty"`
	Delete []string      `json:"delete,omitempty"`
}

// WriteResult is what a write did: the shards' /api/index answers summed.
type WriteResult struct {
	Added    int      `json:"added"`
	Deleted  int      `json:"deleted"`
	Missing  []string `json:"missing,omitempty"`
	Payloads []string `json:"payloads"`
	// Shards names the shards written.
	Shards []string `json:"shards,omitempty"`
}

var (
	_ rerank.EnvIndex  = (*Coordinator)(nil)
	_ rerank.TermStats = (*Coordinator)(nil)
	_ rerank.Preparer  = (*Coordinator)(nil)
)
