package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/cluster"
	"github.com/semrank/semrank/index"
)

// A semrank index's server is also a shard of a collection: the
// /api/shard/ endpoints answer a coordinator (semrank serve --remote,
// cluster.Coordinator) with Bleve's own search, the statistics of a
// query's terms, the document frequencies the lexical stages read, the
// window's payloads by id, and the field dictionaries whose union a
// coordinator counts. They read the
// index only. Their bodies are package cluster's types; a search's
// request and answer are Bleve's SearchRequest and SearchResult JSON.

// Shard endpoints' bounds, beside Limits: a coordinator asks for the
// rerank window and more in one search, and for the document frequencies
// of every term of the window's documents at once.
const (
	maxShardHits  = 100_000 // size + from of a shard search; ids of a payloads request
	maxShardTerms = 200_000 // terms of one docfreq request
)

// shardRoutes adds the shard endpoints, served for a semrank index.
func (s *Server) shardRoutes(api func(pattern, endpoint, method string, h func(w http.ResponseWriter, r *http.Request) error)) {
	api("/api/shard/search", "shard_search", http.MethodPost, s.handleShardSearch)
	api("/api/shard/presearch", "shard_presearch", http.MethodPost, s.handleShardPresearch)
	api("/api/shard/docfreq", "shard_docfreq", http.MethodPost, s.handleShardDocFreq)
	api("/api/shard/payloads", "shard_payloads", http.MethodPost, s.handleShardPayloads)
	api("/api/shard/terms", "shard_terms", http.MethodGet, s.handleShardTerms)
	api("/api/shard/info", "shard_info", http.MethodGet, s.handleShardInfo)
}

// shardBody bounds the body of a coordinator's request: the larger of
// the search and index body limits, since a docfreq request names every
// term of a window of documents.
func (s *Server) shardBody() int64 { return max(s.limits.MaxBodyBytes, s.limits.MaxIndexBodyBytes) }

// shardQuery checks a query a coordinator sent as the API checks a
// client's.
func (s *Server) shardQuery(q query.Query) error {
	if q == nil {
		return badRequest("query is required")
	}
	if err := checkQuery(q, s.idx.Mapping()); err != nil {
		return err
	}
	if v, ok := q.(query.ValidatableQuery); ok {
		if err := v.Validate(); err != nil {
			return badRequest("query is not valid: %v", err)
		}
	}
	return nil
}

func (s *Server) handleShardSearch(w http.ResponseWriter, r *http.Request) error {
	// cluster.SearchBody, its request held raw: Bleve reads a request
	// without a query as one for nothing, not as the mistake it is.
	var body struct {
		Request json.RawMessage `json:"request"`
		Stats   *cluster.Stats  `json:"stats"`
	}
	if err := decodeBody(w, r, s.shardBody(), &body); err != nil {
		return err
	}
	var probe struct {
		Query json.RawMessage `json:"query"`
	}
	if len(body.Request) == 0 || json.Unmarshal(body.Request, &probe) != nil {
		return badRequest("request is required: Bleve's search request, an object")
	}
	if q := bytes.TrimSpace(probe.Query); len(q) == 0 || bytes.Equal(q, []byte("null")) {
		return badRequest("request.query is required")
	}
	req := new(bleve.SearchRequest)
	if err := parseBleve(func() error { return json.Unmarshal(body.Request, req) }); err != nil {
		return badRequest("request is not Bleve's search request: %v", err)
	}
	switch {
	case req.Size < 0 || req.From < 0 || req.Size > maxShardHits-req.From:
		return badRequest("size %d and from %d: each at least 0, and together at most %d", req.Size, req.From, maxShardHits)
	case len(req.Fields) > s.limits.MaxFields && !(len(req.Fields) == 1 && req.Fields[0] == "*"):
		return badRequest("%d fields asked for; the limit is %d", len(req.Fields), s.limits.MaxFields)
	}
	if err := s.shardQuery(req.Query); err != nil {
		return err
	}
	if body.Stats != nil {
		n, err := s.idx.DocCount()
		if err != nil {
			return err
		}
		if err := checkStats(body.Stats, n); err != nil {
			return err
		}
	}
	// On two cores where one is free and the query reads many postings
	// (index.Search), as a window's search over one index is.
	res, err := index.Search(r.Context(), s.idx, cluster.WithStats(req, body.Stats))
	// After the search: a write during it moves the epoch, and the
	// coordinator searches again.
	w.Header().Set(cluster.EpochHeader, cluster.Epoch(s.idx))
	if err != nil {
		if cerr := r.Context().Err(); cerr != nil {
			return cerr
		}
		if queryFault(r.Context(), s.idx, req.Query) {
			return badRequest("query cannot be run: %v", err)
		}
		return err
	}
	for _, h := range res.Hits {
		h.Index = "" // the index's path here; the coordinator names the shard
	}
	if accepts(r, cluster.ResultType) {
		if b, ok := cluster.AppendResult(nil, res); ok {
			w.Header().Set("Content-Type", cluster.ResultType)
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(b)
			return nil
		}
	}
	return writeJSON(w, http.StatusOK, res)
}

// accepts reports whether r's Accept header lists the media type typ
// (a coordinator's does; other clients get JSON).
func accepts(r *http.Request, typ string) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), typ) {
				return true
			}
		}
	}
	return false
}

// checkStats refuses statistics of no collection this shard, holding
// docs documents, belongs to: fewer documents than it holds, a term in
// more documents than there are (whose idf is not a number), more terms
// than a docfreq request may name.
func checkStats(st *cluster.Stats, docs uint64) error {
	if st.Docs < docs {
		return badRequest("stats: %d documents in the collection, fewer than the %d of this shard", st.Docs, docs)
	}
	n := 0
	for f, fs := range st.Fields {
		if fs == nil || fs.Terms < 0 || !utf8.ValidString(f) {
			return badRequest("stats: field %q has no valid statistics", f)
		}
		for t, df := range fs.DocFreq {
			if df > st.Docs {
				return badRequest("stats: term %q of field %q in %d documents, more than the collection's %d", t, f, df, st.Docs)
			}
		}
		n += len(fs.DocFreq)
	}
	if n > maxShardTerms {
		return badRequest("stats: %d terms; the limit is %d", n, maxShardTerms)
	}
	return nil
}

func (s *Server) handleShardPresearch(w http.ResponseWriter, r *http.Request) error {
	var body cluster.PresearchBody
	if err := decodeBody(w, r, s.shardBody(), &body); err != nil {
		return err
	}
	if q := bytes.TrimSpace(body.Query); len(q) == 0 || bytes.Equal(q, []byte("null")) {
		return badRequest("query is required: a Bleve query object")
	}
	q, err := parseQueryObject(body.Query)
	if err != nil {
		return badRequest("query is not a Bleve query object: %v", err)
	}
	if err := s.shardQuery(q); err != nil {
		return err
	}
	epoch := cluster.Epoch(s.idx)
	st, err := cluster.Presearch(r.Context(), s.idx, q)
	if err != nil {
		if queryFault(r.Context(), s.idx, q) {
			return badRequest("query cannot be run: %v", err)
		}
		return err
	}
	return writeJSON(w, http.StatusOK, cluster.ShardStats{Stats: *st, Epoch: epoch})
}

func (s *Server) handleShardDocFreq(w http.ResponseWriter, r *http.Request) error {
	var body cluster.DocFreqBody
	if err := decodeBody(w, r, s.shardBody(), &body); err != nil {
		return err
	}
	if len(body.Terms) > maxShardTerms {
		return badRequest("%d terms; the limit is %d", len(body.Terms), maxShardTerms)
	}
	if len(body.Fields) > 0 {
		return s.shardFieldDocFreq(w, r, body)
	}
	epoch := cluster.Epoch(s.idx)
	n, err := s.store.DocCount()
	if err != nil {
		return err
	}
	df := make(map[string]uint64, len(body.Terms))
	for _, t := range body.Terms {
		if err := r.Context().Err(); err != nil {
			return err
		}
		if df[t], err = s.store.DocFreq(t); err != nil {
			return err
		}
	}
	out := cluster.ShardStats{Stats: cluster.Stats{Docs: n, Fields: map[string]*cluster.FieldStats{cluster.DocFreqField: {DocFreq: df}}}, Epoch: epoch}
	return writeJSON(w, http.StatusOK, out)
}

// shardFieldDocFreq answers a docfreq request naming fields: each
// term's count in each field, and in _all (index.Stats counts both).
func (s *Server) shardFieldDocFreq(w http.ResponseWriter, r *http.Request, body cluster.DocFreqBody) error {
	fields := []string{index.FieldAll}
	for _, f := range body.Fields {
		if f == "" || len(f) > 256 || !utf8.ValidString(f) {
			return badRequest("fields: %q is not a field name", f)
		}
		if !slices.Contains(fields, f) {
			fields = append(fields, f)
		}
	}
	if len(fields) > s.limits.MaxFields+1 || len(fields)*len(body.Terms) > maxShardTerms {
		return badRequest("%d terms in %d fields; the limit is %d fields and %d terms in all", len(body.Terms), len(fields), s.limits.MaxFields, maxShardTerms)
	}
	epoch := cluster.Epoch(s.idx)
	n, err := s.idx.DocCount()
	if err != nil {
		return err
	}
	df, err := cluster.FieldDocFreqs(r.Context(), s.idx, fields, body.Terms)
	if err != nil {
		return err
	}
	out := cluster.ShardStats{Stats: cluster.Stats{Docs: n, Fields: make(map[string]*cluster.FieldStats, len(df))}, Epoch: epoch}
	for f, m := range df {
		out.Fields[f] = &cluster.FieldStats{DocFreq: m}
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleShardPayloads(w http.ResponseWriter, r *http.Request) error {
	var body cluster.PayloadsBody
	if err := decodeBody(w, r, s.shardBody(), &body); err != nil {
		return err
	}
	if len(body.IDs) > maxShardHits {
		return badRequest("%d ids; the limit is %d", len(body.IDs), maxShardHits)
	}
	out := cluster.ShardPayloads{Models: map[string]string{}, Payloads: map[string]map[string][]byte{}}
	for _, name := range s.store.PayloadNames() {
		model := s.store.PayloadModel(name)
		docs := map[string][]byte{}
		for _, id := range body.IDs {
			b, ok, err := s.store.PayloadFrom(name, model, id)
			if err != nil {
				return err
			}
			if ok {
				docs[id] = b
			}
		}
		out.Models[name], out.Payloads[name] = model, docs
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleShardTerms(w http.ResponseWriter, r *http.Request) error {
	field := r.URL.Query().Get("field")
	if field == "" || len(field) > 256 || !utf8.ValidString(field) {
		return badRequest("field: give the field whose dictionary to list (?field=_all)")
	}
	terms := []string{}
	err := cluster.Terms(s.idx, field, func(t string) error {
		terms = append(terms, t)
		return r.Context().Err()
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, terms)
}

func (s *Server) handleShardInfo(w http.ResponseWriter, _ *http.Request) error {
	n, err := s.idx.DocCount()
	if err != nil {
		return err
	}
	fields, err := s.idx.Fields()
	if err != nil {
		return err
	}
	m, err := json.Marshal(s.idx.Mapping())
	if err != nil {
		return err
	}
	shard, _, err := cluster.ShardOfIndex(s.idx)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, cluster.Info{Shard: shard, Docs: n, Epoch: cluster.Epoch(s.idx), Fields: fields, Mapping: m})
}
