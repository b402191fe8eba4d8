package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/semrank/semrank/cluster"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
)

// shardedPipeline reads every statistic a coordinator gathers: the first
// stage's BM25, and the lexical stages' document frequencies.
const shardedPipeline = `window: 50
stages:
  - type: tfidf
  - type: bm25
  - type: overlap
  - type: length
`

// testCluster is three shard servers of the demo corpus and a coordinator
// over them, on loopback, beside a server of one index of every document.
type testCluster struct {
	whole  *httptest.Server
	coord  *httptest.Server
	c      *cluster.Coordinator
	shards []*index.Index
	srv    []*httptest.Server
	handle []http.Handler
}

func newTestCluster(t testing.TB) *testCluster {
	t.Helper()
	return newTestClusterOf(t, shardedPipeline, func(d dataset.Doc) int { return cluster.Of(d.ID, 3) })
}

// newTestClusterOf is newTestCluster with pipeline, and the documents on
// the shards shardOf says.
func newTestClusterOf(t testing.TB, pipeline string, shardOf func(dataset.Doc) int) *testCluster {
	t.Helper()
	_, ds := demoIndex(t)
	const n = 3
	c := &testCluster{}
	_, c.whole, _ = newServer(t, newIndex(t, ds.Corpus), pipeline, nil)
	var urls []string
	for s := range n {
		var docs []dataset.Doc
		for _, d := range ds.Corpus {
			if shardOf(d) == s {
				docs = append(docs, d)
			}
		}
		idx := newIndex(t, docs)
		srv, ts, _ := newServer(t, idx, pipeline, nil)
		c.shards, c.srv, c.handle = append(c.shards, idx), append(c.srv, ts), append(c.handle, srv)
		urls = append(urls, ts.URL)
	}
	// A loaded machine may take seconds to answer; no failure this test
	// makes is a timeout.
	coord, err := cluster.NewCoordinator(context.Background(), urls, cluster.Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Index: coord, PipelinePath: writePipeline(t, t.TempDir(), pipeline), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	c.coord, c.c = httptest.NewServer(s), coord
	t.Cleanup(c.coord.Close)
	return c
}

// searchText asks server url for text's first page.
func searchText(t testing.TB, url, text string) SearchResponse {
	t.Helper()
	var out SearchResponse
	if code := call(t, "POST", url+"/api/search", map[string]any{"query": text, "size": 10}, &out); code != http.StatusOK {
		t.Fatalf("search %q at %s: status %d", text, url, code)
	}
	return out
}

// sameHits fails t unless got has want's ids, in order, with their scores
// and first-stage scores to 1e-9.
func sameHits(t *testing.T, what string, got, want SearchResponse) {
	t.Helper()
	if len(got.Hits) != len(want.Hits) {
		t.Fatalf("%s: %d hits, want %d", what, len(got.Hits), len(want.Hits))
	}
	for i, w := range want.Hits {
		g := got.Hits[i]
		if g.ID != w.ID || math.Abs(g.Score-w.Score) > 1e-9 || math.Abs(g.FirstStageScore-w.FirstStageScore) > 1e-9 {
			t.Fatalf("%s: hit %d is %s (score %v, first stage %v), want %s (%v, %v)", what, i+1, g.ID, g.Score, g.FirstStageScore, w.ID, w.Score, w.FirstStageScore)
		}
	}
}

// rankAsOneIndex fails t unless the coordinator answers every demo query
// with the whole index's top 10, twice: the second time from the
// statistics and payloads it cached. It returns the demo data set.
func (c *testCluster) rankAsOneIndex(t *testing.T) *dataset.Dataset {
	t.Helper()
	_, ds := demoIndex(t)
	for pass := range 2 {
		for _, q := range ds.Queries {
			want := searchText(t, c.whole.URL, q.Text)
			got := searchText(t, c.coord.URL, q.Text)
			if got.Partial || !got.Reranked {
				t.Fatalf("pass %d, query %s: partial %v (%v), reranked %v", pass, q.ID, got.Partial, got.Failed, got.Reranked)
			}
			sameHits(t, fmt.Sprintf("pass %d, query %s", pass, q.ID), got, want)
		}
	}
	return ds
}

// TestCoordinatorRanksAsOneIndex: three shards and a coordinator answer
// every demo query with the top 10 of one index of every document: ids,
// order and scores; a killed shard gives a partial answer naming it, and
// the full answer comes back with the shard; a document written through
// the coordinator lands on its shard and is found.
func TestCoordinatorRanksAsOneIndex(t *testing.T) {
	c := newTestCluster(t)
	ds := c.rankAsOneIndex(t)

	text := ds.Queries[0].Text
	want := searchText(t, c.whole.URL, text)
	down := c.srv[1]
	down.Close()
	got := searchText(t, c.coord.URL, text)
	if !got.Partial || got.Failed[down.URL] == "" || len(got.Failed) != 1 {
		t.Fatalf("a shard down: partial %v, failed %v", got.Partial, got.Failed)
	}
	for _, h := range got.Hits {
		if cluster.Of(h.ID, 3) == 1 {
			t.Fatalf("a shard down: hit %s of that shard", h.ID)
		}
	}
	// With every shard down, a search is refused as unavailable.
	for i, ts := range c.srv {
		if i != 1 {
			ts.Close()
		}
	}
	var e ErrorBody
	if code := call(t, "POST", c.coord.URL+"/api/search", map[string]any{"query": text}, &e); code != http.StatusServiceUnavailable || !strings.Contains(e.Error, "no shard answered") {
		t.Fatalf("every shard down: status %d, %q", code, e.Error)
	}
	for i := range c.srv {
		if i != 1 {
			c.srv[i] = restart(t, c.srv[i], c.handle[i])
		}
	}
	// The shard comes back at its address.
	c.srv[1] = restart(t, down, c.handle[1])
	sameHits(t, "the shard back", searchText(t, c.coord.URL, text), want)

	doc := map[string]any{"_id": "new-1", "title": "Camel racing season", "text": "When does the camel racing season start in Qatar?"}
	var w IndexResponse
	if code := call(t, "POST", c.coord.URL+"/api/index", map[string]any{"add": []any{doc}}, &w); code != http.StatusOK || w.Added != 1 {
		t.Fatalf("write through the coordinator: status %d, %+v", code, w)
	}
	for s, idx := range c.shards {
		_, ok, err := idx.Doc("new-1")
		if err != nil || ok != (s == cluster.Of("new-1", 3)) {
			t.Fatalf("shard %d holds new-1: %v (%v); it belongs to shard %d", s, ok, err, cluster.Of("new-1", 3))
		}
	}
	var d DocResponse
	if code := call(t, "GET", c.coord.URL+"/api/doc/new-1", nil, &d); code != http.StatusOK || d.Title != "Camel racing season" {
		t.Fatalf("GET /api/doc/new-1 through the coordinator: status %d, %+v", code, d)
	}
	found := searchText(t, c.coord.URL, "camel racing season")
	if len(found.Hits) == 0 || found.Hits[0].ID != "new-1" {
		t.Fatalf("the written document is not found first: %+v", found.Hits)
	}
	// The write moved its shard's epoch: a query whose statistics were
	// cached before it is searched with the new ones, as one index with
	// the document ranks it.
	if code := call(t, "POST", c.whole.URL+"/api/index", map[string]any{"add": []any{doc}}, &w); code != http.StatusOK {
		t.Fatalf("write to one index: status %d", code)
	}
	sameHits(t, "after the write", searchText(t, c.coord.URL, text), searchText(t, c.whole.URL, text))
}

// TestCoordinatorRanksAsOneIndexSplit: with every search that may split
// split (the shards' searches with the collection's statistics, and the
// whole index's window searches, whichever finds a core free), the
// coordinator still answers as one index.
func TestCoordinatorRanksAsOneIndexSplit(t *testing.T) {
	splitEverySearch(t)
	newTestCluster(t).rankAsOneIndex(t)
}

// TestCoordinatorOwnFields: a pipeline whose stages read fields of its
// own (the title within the text, no title) ranks through a coordinator
// as over one index: the stages' statistics over those fields are the
// shards' counts summed, and their text the shards' stored fields.
func TestCoordinatorOwnFields(t *testing.T) {
	const pipeline = `window: 50
fields:
  title: []
  text: [title, text]
stages:
  - type: tfidf
  - type: bm25
  - type: length
`
	c := newTestClusterOf(t, pipeline, func(d dataset.Doc) int { return cluster.Of(d.ID, 3) })
	c.rankAsOneIndex(t)
}

// TestCoordinatorFieldStatsBeforeSearch: statistics over a pipeline's
// own fields answer before the coordinator's first search (a stage may
// weigh its query while that search runs), with the counts one index of
// every document gives.
func TestCoordinatorFieldStatsBeforeSearch(t *testing.T) {
	c := newTestClusterOf(t, shardedPipeline, func(d dataset.Doc) int { return cluster.Of(d.ID, 3) })
	fields := []string{"title", "text"}
	stats, _, err := c.c.StatsFor(fields)
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := demoIndex(t)
	want, err := index.NewStats(whole, fields)
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range []string{"bank", "doha", "visa", "nosuchterm"} {
		got, err := stats.DocFreq(term)
		if err != nil {
			t.Fatal(err)
		}
		if w, err := want.DocFreq(term); err != nil || got != w {
			t.Errorf("DocFreq(%q) before any search = %d, one index counts %d (%v)", term, got, w, err)
		}
	}
}

// BenchmarkCoordinatorSearch times the demo queries' reranked searches
// (POST /api/search) of one index of every document and of a coordinator
// over three loopback shards, its caches filled by a first pass. Shards
// and coordinator run in the test's process, so a CPU profile of the
// benchmark shows their work together:
//
//	go test ./server -run '^$' -bench CoordinatorSearch -cpuprofile cpu.out
func BenchmarkCoordinatorSearch(b *testing.B) {
	c := newTestCluster(b)
	_, ds := demoIndex(b)
	for _, s := range []struct{ name, url string }{{"one-index", c.whole.URL}, {"coordinator", c.coord.URL}} {
		b.Run(s.name, func(b *testing.B) {
			for _, q := range ds.Queries {
				searchText(b, s.url, q.Text)
			}
			i := 0
			for b.Loop() {
				searchText(b, s.url, ds.Queries[i%len(ds.Queries)].Text)
				i++
			}
		})
	}
}

// TestRemoteRefusesWhatItLacks: a Remote's writes and internals fail with
// ErrRemote, naming the shard.
func TestRemoteRefusesWhatItLacks(t *testing.T) {
	r, err := cluster.NewRemote("http://127.0.0.1:1", nil, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Index": r.Index("d", nil), "Delete": r.Delete("d"), "Batch": r.Batch(nil), "SetInternal": r.SetInternal(nil, nil),
	} {
		if err == nil || !strings.Contains(err.Error(), "not supported on a remote shard") || !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := r.Advanced(); err == nil {
		t.Error("Advanced: no error")
	}
	for _, bad := range []string{"", "localhost:80", "ftp://x", "http://"} {
		if _, err := cluster.NewRemote(bad, nil, time.Second, ""); err == nil {
			t.Errorf("NewRemote(%q): no error", bad)
		}
	}
}

// TestCoordinatorConcurrent: concurrent searches through one coordinator
// share its caches and still each rank as one index.
func TestCoordinatorConcurrent(t *testing.T) {
	c := newTestCluster(t)
	_, ds := demoIndex(t)
	qs := ds.Queries[:12]
	want := make([]SearchResponse, len(qs))
	for i, q := range qs {
		want[i] = searchText(t, c.whole.URL, q.Text)
	}
	errs := make(chan error, 4*len(qs))
	for w := range 4 {
		go func() {
			for i := range qs {
				j := (i + 3*w) % len(qs)
				var got SearchResponse
				code, raw, err := do("POST", c.coord.URL+"/api/search", map[string]any{"query": qs[j].Text, "size": 10}, "")
				if err == nil && code != http.StatusOK {
					err = fmt.Errorf("status %d: %s", code, raw)
				}
				if err == nil {
					err = json.Unmarshal(raw, &got)
				}
				if err == nil && (len(got.Hits) != len(want[j].Hits) || len(got.Hits) > 0 && (got.Hits[0].ID != want[j].Hits[0].ID || math.Abs(got.Hits[0].Score-want[j].Hits[0].Score) > 1e-9)) {
					err = fmt.Errorf("query %s: first hit %+v, want %+v", qs[j].ID, got.Hits, want[j].Hits)
				}
				errs <- err
			}
		}()
	}
	for range 4 * len(qs) {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// restart serves h again at the address of ts, which was closed.
func restart(t *testing.T, ts *httptest.Server, h http.Handler) *httptest.Server {
	t.Helper()
	addr := ts.Listener.Addr().String()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("listening on %s again: %v", addr, err)
	}
	back := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	back.Start()
	t.Cleanup(back.Close)
	return back
}

// TestCoordinatorShares: the coordinator asks each shard for about its
// share of the first hits; where one shard holds more than that (every
// document about visas on one shard), it asks again for all, and still
// ranks as one index.
func TestCoordinatorShares(t *testing.T) {
	c := newTestClusterOf(t, shardedPipeline, func(d dataset.Doc) int {
		if strings.Contains(strings.ToLower(d.Title+" "+d.Text), "visa") {
			return 0
		}
		return cluster.Of(d.ID, 3)
	})
	for _, text := range []string{"visa renewal for my wife", "family visa", "work visa sponsor", "best bank in Doha"} {
		for _, size := range []int{10, 40} {
			want := searchSize(t, c.whole.URL, text, size)
			sameHits(t, fmt.Sprintf("%q, size %d", text, size), searchSize(t, c.coord.URL, text, size), want)
		}
	}
}

// searchSize asks server url for text's first size hits.
func searchSize(t *testing.T, url, text string, size int) SearchResponse {
	t.Helper()
	var out SearchResponse
	if code := call(t, "POST", url+"/api/search", map[string]any{"query": text, "size": size, "rerank": map[string]any{"window": 80}}, &out); code != http.StatusOK {
		t.Fatalf("search %q at %s: status %d", text, url, code)
	}
	return out
}
