// Package server serves a semrank index over HTTP: a JSON search API close
// to Bleve's conventions, whose results carry each hit's first-stage rank
// and per-stage scores; batch indexing that computes the pipeline's
// per-document payloads; Prometheus metrics; a web page that shows the
// first-stage and reranked lists side by side; pipeline reload without
// dropping requests; and graceful shutdown.
//
// Endpoints:
//
//	POST /api/search        search (see SearchRequest)
//	POST /api/index         add, update and delete documents (see IndexRequest)
//	GET  /api/doc/{id}      one stored document
//	     /api/shard/...     a coordinator's requests to a shard (see shard.go)
//	POST /api/admin/reload  rebuild the pipeline from its file
//	GET  /healthz           liveness and the loaded pipeline
//	GET  /metrics           Prometheus metrics
//	GET  /                  the web page
//
// POST bodies are JSON: one sent with another Content-Type (a form, plain
// text) is refused with 415, so an HTML form on another site cannot post to
// the API. A search body without a Content-Type is read as JSON; the write
// endpoints, /api/index and /api/admin/reload, require the header
// (Content-Type: application/json, even for a reload's empty body) and
// refuse with 403 a request the browser marks as sent by a page on another
// site (Sec-Fetch-Site, or an Origin whose host is not the request's
// Host), so that such a page cannot write through its visitor's browser.
//
// Reload builds a new pipeline from the file the server was started with
// and swaps it in atomically: a request uses the pipeline it started with
// to the end, so in-flight searches finish on the old models. Nothing in a
// request names a file on the server; the pipeline file is fixed at start.
//
// Queries come in two forms. A plain-string "query" is natural-language
// text, searched with the pipeline's first stage (rerank.Pipeline.Query:
// semrank's BM25 text query, its terms boosted by first_stage.query_boost
// when the pipeline names it); a query object is any Bleve query
// (including Bleve's query-string syntax, {"query": "+title:visa"}). The
// stages compare candidates with the text, or with the query object's
// words. Searches go through rerank.Wrap (Search), so the API reranks
// exactly as library users and semrank search do.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/cluster"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// Limits bound what one request may ask for. Zero fields take the
// defaults of DefaultLimits; New refuses negative ones.
type Limits struct {
	MaxBodyBytes      int64         // search and admin request bodies
	MaxIndexBodyBytes int64         // /api/index request bodies
	MaxQueryBytes     int           // a query string, or a query object's JSON
	MaxSize           int           // hits per page
	MaxFrom           int           // paging offset
	MaxWindow         int           // rerank window
	MaxFields         int           // stored fields asked for
	MaxIndexDocs      int           // documents (added plus deleted) per /api/index request
	MaxIDBytes        int           // a document id
	Timeout           time.Duration // one request's work
	// MaxDocBytes bounds one document of /api/index: its title, text and
	// metadata (as JSON) together; /api/index writes its documents in
	// parts of this size or one document. Indexing a part, its analysis
	// and payloads, cannot be interrupted, so this bounds how far a write
	// runs past Timeout, and the memory it takes (a document of 20 MB took
	// 33 s and 1.9 GB).
	MaxDocBytes int64
	// MaxQueuedIndexBytes bounds the /api/index bodies held at once, read
	// and waiting for the write lock or being written, counted by their
	// size as sent: a request past it is refused with 503 and Retry-After
	// before its body is read. Zero means twice MaxIndexBodyBytes; it
	// must be at least MaxIndexBodyBytes.
	MaxQueuedIndexBytes int64
}

// DefaultLimits are generous for interactive use and small enough that one
// request cannot hold the server for long.
var DefaultLimits = Limits{
	MaxBodyBytes:      64 << 10,
	MaxIndexBodyBytes: 32 << 20,
	MaxQueryBytes:     4096,
	MaxSize:           100,
	MaxFrom:           1000,
	MaxWindow:         1000,
	MaxFields:         32,
	MaxIndexDocs:      5000,
	MaxIDBytes:        512,
	Timeout:           10 * time.Second,
	MaxDocBytes:       2 << 20,
	// MaxQueuedIndexBytes: twice MaxIndexBodyBytes, whatever that is set to.
}

// check refuses negative limits, naming the field: a negative limit would
// otherwise silently become the default.
func (l Limits) check() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxBodyBytes", l.MaxBodyBytes},
		{"MaxIndexBodyBytes", l.MaxIndexBodyBytes},
		{"MaxQueryBytes", int64(l.MaxQueryBytes)},
		{"MaxSize", int64(l.MaxSize)},
		{"MaxFrom", int64(l.MaxFrom)},
		{"MaxWindow", int64(l.MaxWindow)},
		{"MaxFields", int64(l.MaxFields)},
		{"MaxIndexDocs", int64(l.MaxIndexDocs)},
		{"MaxIDBytes", int64(l.MaxIDBytes)},
		{"MaxDocBytes", l.MaxDocBytes},
		{"MaxQueuedIndexBytes", l.MaxQueuedIndexBytes},
	} {
		if f.v < 0 {
			return fmt.Errorf("server: Limits.%s %d: want a positive number, or 0 for the default", f.name, f.v)
		}
	}
	if l.Timeout < 0 {
		return fmt.Errorf("server: Limits.Timeout %s: want a positive duration, or 0 for the default", l.Timeout)
	}
	if d := l.withDefaults(); d.MaxQueuedIndexBytes < d.MaxIndexBodyBytes {
		return fmt.Errorf("server: Limits.MaxQueuedIndexBytes %d is less than MaxIndexBodyBytes %d: a body of the largest size allowed would always be refused", d.MaxQueuedIndexBytes, d.MaxIndexBodyBytes)
	}
	return nil
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&l.MaxQueryBytes, d.MaxQueryBytes)
	set(&l.MaxSize, d.MaxSize)
	set(&l.MaxFrom, d.MaxFrom)
	set(&l.MaxWindow, d.MaxWindow)
	set(&l.MaxFields, d.MaxFields)
	set(&l.MaxIndexDocs, d.MaxIndexDocs)
	set(&l.MaxIDBytes, d.MaxIDBytes)
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = d.MaxBodyBytes
	}
	if l.MaxIndexBodyBytes <= 0 {
		l.MaxIndexBodyBytes = d.MaxIndexBodyBytes
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxDocBytes <= 0 {
		l.MaxDocBytes = d.MaxDocBytes
	}
	if l.MaxQueuedIndexBytes <= 0 {
		l.MaxQueuedIndexBytes = 2 * l.MaxIndexBodyBytes
	}
	return l
}

// Config configures a Server.
type Config struct {
	// Index is the index served: searched, and written by /api/index when
	// it is a semrank index (an *index.Index, not read-only). Any other
	// Bleve index is served for searching, its pipeline naming its fields;
	// the application that built it writes it. The server does not close
	// it; its caller does, once Serve has returned.
	Index bleve.Index
	// PipelinePath is the pipeline file, built at New and again on every
	// Reload.
	PipelinePath string
	// Limits bound each request. Its zero fields take DefaultLimits'
	// values (the zero Limits is DefaultLimits); negative ones make New
	// fail. Server.Limits returns the limits in force.
	Limits Limits
	// AdminToken, when set, must be sent as "Authorization: Bearer TOKEN"
	// to the endpoints that change what the server answers:
	// /api/admin/reload and /api/index. Searches and reads stay open.
	AdminToken string
	// Examples are queries the web page offers to try. Each is put in the
	// page's one-line search box, so runs of white space, line breaks
	// included, are served as one space.
	Examples []string
	Logger   *slog.Logger // nil: slog.Default()
}

// Server is the HTTP service. It is an http.Handler.
type Server struct {
	idx   bleve.Index
	store *index.Index // idx when it is a semrank index, else nil
	// coord is idx when it is a sharded collection's coordinator, which
	// sends writes to the shards.
	coord    *cluster.Coordinator
	path     string
	limits   Limits
	token    string
	examples []string
	log      *slog.Logger
	metrics  *metrics
	handler  http.Handler

	current  atomic.Pointer[loaded]
	reloadMu ctxMutex // one reload at a time
	// writeMu admits one /api/index batch at a time, and no batch while a
	// reload builds and swaps the pipeline: a batch writes the payloads of
	// the pipeline in use when it runs, and a new pipeline's stages, which
	// refuse payloads written by another model, see every batch before it
	// or none of it.
	writeMu ctxMutex
	// queued counts the bytes of the /api/index bodies held, up to
	// Limits.MaxQueuedIndexBytes.
	queued *byteQueue
}

// ctxMutex is a mutex whose Lock gives up when its context ends, so a
// request waiting behind a long index batch or reload keeps to its
// timeout.
type ctxMutex chan struct{}

func newCtxMutex() ctxMutex { return make(ctxMutex, 1) }

// Lock locks m, or returns ctx's error if ctx ends first.
func (m ctxMutex) Lock(ctx context.Context) error {
	select {
	case m <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m ctxMutex) Unlock() { <-m }

// byteQueue admits requests while the bytes they hold stay within limit.
type byteQueue struct {
	mu    sync.Mutex
	n     int64 // held
	limit int64
}

// tryAcquire takes n bytes if they fit under the limit, and reports
// whether they did; it does not wait.
func (q *byteQueue) tryAcquire(n int64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n+n > q.limit {
		return false
	}
	q.n += n
	return true
}

// release gives back n bytes taken by tryAcquire.
func (q *byteQueue) release(n int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.n -= n
}

// held returns the bytes taken.
func (q *byteQueue) held() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// loaded is one generation of the pipeline. It is never modified after it
// is published, so a request holding it is unaffected by a reload.
type loaded struct {
	pipeline   *rerank.Pipeline
	generation int
	at         time.Time
}

// New builds the pipeline at cfg.PipelinePath against cfg.Index and returns
// the server.
func New(cfg Config) (*Server, error) {
	if cfg.Index == nil {
		return nil, errors.New("server: no index")
	}
	if cfg.PipelinePath == "" {
		return nil, errors.New("server: no pipeline file")
	}
	if err := cfg.Limits.check(); err != nil {
		return nil, err
	}
	if err := registerHighlighter(); err != nil {
		return nil, fmt.Errorf("server: registering the highlighter: %w", err)
	}
	store, _ := cfg.Index.(*index.Index)
	coord, _ := cfg.Index.(*cluster.Coordinator)
	s := &Server{
		idx:      cfg.Index,
		store:    store,
		coord:    coord,
		path:     cfg.PipelinePath,
		limits:   cfg.Limits.withDefaults(),
		token:    cfg.AdminToken,
		examples: oneLine(cfg.Examples),
		log:      cfg.Logger,
		metrics:  newMetrics(),
		reloadMu: newCtxMutex(),
		writeMu:  newCtxMutex(),
	}
	s.queued = &byteQueue{limit: s.limits.MaxQueuedIndexBytes}
	if s.log == nil {
		s.log = slog.Default()
	}
	if _, err := s.Reload(context.Background()); err != nil {
		return nil, err
	}
	if s.store != nil && !s.store.TermVectors() {
		s.log.Warn("the index keeps no term vectors (indexed by an earlier semrank): phrase queries match nothing and highlighting marks nothing; remove the index and index the collection again (indexing into it keeps its mapping)")
	}
	s.handler = s.routes()
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Limits returns the limits in force.
func (s *Server) Limits() Limits { return s.limits }

// Generation returns the generation of the pipeline in use: 1 after New,
// one more after each successful Reload.
func (s *Server) Generation() int { return s.current.Load().generation }

// Reload builds the pipeline file again (picking up retrained models) and
// swaps it in. On error the running pipeline stays. It returns the new
// generation. Reloads and /api/index requests run one at a time: a reload
// waits for the request being indexed, and later requests wait for the
// reload, so each request's payloads are all computed by one pipeline's
// models and a new pipeline's stages see every document it indexed or
// none.
func (s *Server) Reload(ctx context.Context) (int, error) {
	cur, err := s.reload(ctx)
	if err != nil {
		return 0, err
	}
	return cur.generation, nil
}

// reload is Reload, returning the generation it published (which a
// concurrent reload may already have replaced).
func (s *Server) reload(ctx context.Context) (*loaded, error) {
	if err := s.reloadMu.Lock(ctx); err != nil {
		return nil, err
	}
	defer s.reloadMu.Unlock()
	if err := s.writeMu.Lock(ctx); err != nil {
		return nil, err
	}
	defer s.writeMu.Unlock()
	start := time.Now()
	p, _, err := rerank.LoadPipeline(s.path, rerank.EnvOf(s.idx))
	if err != nil {
		s.metrics.reloads.WithLabelValues("error").Inc()
		return nil, fmt.Errorf("server: loading the pipeline: %w", err)
	}
	p.Observe = s.metrics.observeStage
	gen := 1
	if old := s.current.Load(); old != nil {
		gen = old.generation + 1
	}
	cur := &loaded{pipeline: p, generation: gen, at: time.Now()}
	s.current.Store(cur)
	s.metrics.reloads.WithLabelValues("ok").Inc()
	s.metrics.generation.Set(float64(gen))
	s.log.Info("pipeline loaded", "file", s.path, "generation", gen, "stages", p.StageNames(),
		"window", p.WindowSize(), "took", time.Since(start).Round(time.Millisecond))
	if missing := s.missingPayloads(p); len(missing) > 0 {
		s.log.Warn("the index lacks payloads the stages read; they compute them from text for every query, several times slower until documents are indexed with the pipeline's payload encoders (or added through /api/index)",
			"payloads", missing)
	}
	s.warnGivenList(p)
	return cur, nil
}

// warnGivenList warns of each feature p's fusion weighs that only a given
// candidate list supplies (rerank.Pipeline.GivenListWeights): the server
// retrieves its candidates, so the fusion runs without the feature and
// ranks otherwise than it did when evaluated.
func (s *Server) warnGivenList(p *rerank.Pipeline) {
	w := p.GivenListWeights()
	for _, name := range slices.Sorted(maps.Keys(w)) {
		s.log.Warn("this pipeline was trained on given candidate lists: its fusion weighs a feature that exists only with a dataset's candidates.trec, which the server, retrieving candidates with BM25, never has; the fusion runs here without that feature and ranks differently from the evaluated pipeline (semrank train fusion --data on a dataset without candidates.trec learns a fusion for retrieved candidates)",
			"file", s.path, "feature", name, "weight", w[name])
	}
}

// missingPayloads names the payloads p's stages read that the index does
// not hold as written by their models.
func (s *Server) missingPayloads(p *rerank.Pipeline) []string {
	if s.store == nil {
		return nil // computed from text: a plain index holds no payloads
	}
	var out []string
	for _, e := range p.MissingPayloads(s.store) {
		out = append(out, e.PayloadName())
	}
	return out
}
