package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"

	"github.com/semrank/semrank/cluster"
	"github.com/semrank/semrank/index"
)

// TestShardEndpointsRefuse: malformed, hostile and oversized requests to
// the shard endpoints get a 4xx naming the problem.
func TestShardEndpointsRefuse(t *testing.T) {
	idx, _ := demoIndex(t)
	_, ts, _ := newServer(t, idx, lexicalPipeline, nil)
	many := make([]string, 200_001)
	for i := range many {
		many[i] = "t"
	}
	for _, tt := range []struct {
		name, method, path string
		body               any
		code               int
		want               string
	}{
		{"no request", "POST", "/api/shard/search", `{}`, 400, "request is required"},
		{"request not an object", "POST", "/api/shard/search", `{"request": [1]}`, 400, "request is required"},
		{"no query", "POST", "/api/shard/search", `{"request": {"size": 10}}`, 400, "request.query is required"},
		{"query not a query", "POST", "/api/shard/search", `{"request": {"query": 7}}`, 400, "not Bleve's search request"},
		{"huge size", "POST", "/api/shard/search", `{"request": {"query": {"match_all": {}}, "size": 100001}}`, 400, "together at most 100000"},
		{"far from", "POST", "/api/shard/search", `{"request": {"query": {"match_all": {}}, "size": 10, "from": 99999}}`, 400, "together at most 100000"},
		{"boost", "POST", "/api/shard/search", `{"request": {"query": {"match": "bank", "boost": 1e300}}}`, 400, "boost"},
		{"bad stats", "POST", "/api/shard/search", `{"request": {"query": {"match": "bank"}}, "stats": {"docs": 1000, "fields": {"_all": null}}}`, 400, "no valid statistics"},
		{"df past docs", "POST", "/api/shard/search", `{"request": {"query": {"match": "bank"}}, "stats": {"docs": 600, "fields": {"_all": {"terms": 5, "doc_freq": {"bank": 601}}}}}`, 400, "more than the collection's 600"},
		{"docs below the shard's", "POST", "/api/shard/search", `{"request": {"query": {"match": "bank"}}, "stats": {"docs": 1}}`, 400, "fewer than the"},
		{"unknown key", "POST", "/api/shard/search", `{"request": {"query": {"match": "bank"}}, "extra": 1}`, 400, "extra"},
		{"bad regexp", "POST", "/api/shard/search", `{"request": {"query": {"regexp": "[", "field": "text"}}}`, 400, "cannot be run"},
		{"presearch not a query", "POST", "/api/shard/presearch", `{"query": 7}`, 400, "not a Bleve query object"},
		{"presearch no query", "POST", "/api/shard/presearch", `{}`, 400, "query"},
		{"payloads too many", "POST", "/api/shard/payloads", map[string]any{"ids": make([]string, 100_001)}, 400, "the limit is 100000"},
		{"docfreq too many", "POST", "/api/shard/docfreq", map[string]any{"terms": many}, 400, "the limit is 200000"},
		{"docfreq empty field", "POST", "/api/shard/docfreq", `{"terms": ["bank"], "fields": [""]}`, 400, "not a field name"},
		{"docfreq too many in fields", "POST", "/api/shard/docfreq", map[string]any{"terms": make([]string, 100_001), "fields": []string{"title"}}, 400, "terms in all"},
		{"terms no field", "GET", "/api/shard/terms", nil, 400, "field"},
		{"search by GET", "GET", "/api/shard/search", nil, 405, "use POST"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var e ErrorBody
			if code := call(t, tt.method, ts.URL+tt.path, tt.body, &e); code != tt.code || !strings.Contains(e.Error, tt.want) {
				t.Errorf("status %d %q, want %d and %q", code, e.Error, tt.code, tt.want)
			}
		})
	}
}

// TestShardSearchIsBleves: a shard's search answers Bleve's request with
// Bleve's result, as the index itself does.
func TestShardSearchIsBleves(t *testing.T) {
	idx, _ := demoIndex(t)
	_, ts, _ := newServer(t, idx, lexicalPipeline, nil)
	q, err := index.TextQuery("best bank in Doha")
	if err != nil {
		t.Fatal(err)
	}
	req := bleve.NewSearchRequestOptions(q, 20, 5, false)
	req.Fields = []string{"title"}
	want, err := idx.Search(req)
	if err != nil {
		t.Fatal(err)
	}
	var got bleve.SearchResult
	if code := call(t, "POST", ts.URL+"/api/shard/search", cluster.SearchBody{Request: req}, &got); code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if got.Total != want.Total || len(got.Hits) != len(want.Hits) {
		t.Fatalf("total %d, %d hits; want %d, %d", got.Total, len(got.Hits), want.Total, len(want.Hits))
	}
	for i, h := range want.Hits {
		g := got.Hits[i]
		if g.ID != h.ID || g.Score != h.Score || g.Fields["title"] != h.Fields["title"] {
			t.Fatalf("hit %d: %s %v %v, want %s %v %v", i, g.ID, g.Score, g.Fields, h.ID, h.Score, h.Fields)
		}
	}
	var in cluster.Info
	if code := call(t, "GET", ts.URL+"/api/shard/info", nil, &in); code != http.StatusOK || in.Epoch == "" || !json.Valid(in.Mapping) {
		t.Fatalf("info: status %d, %+v", code, in)
	}
	if n, _ := idx.DocCount(); in.Docs != n {
		t.Errorf("info: %d documents, want %d", in.Docs, n)
	}
}

// TestShardSearchSplit: a shard's search with a collection's statistics,
// split over two cores (every search split), answers as Bleve's one
// search does: every hit, scores to 1e-9 (a split search sums a
// disjunction's terms in another order), ids in the same order once hits
// of equal rounded score are ordered by id.
func TestShardSearchSplit(t *testing.T) {
	splitEverySearch(t)
	idx, ds := demoIndex(t)
	_, ts, _ := newServer(t, idx, lexicalPipeline, nil)
	canonical := func(hs search.DocumentMatchCollection) search.DocumentMatchCollection {
		hs = slices.Clone(hs)
		slices.SortStableFunc(hs, func(a, b *search.DocumentMatch) int {
			if c := cmp.Compare(index.StableScore(b.Score), index.StableScore(a.Score)); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		return hs
	}
	for _, dq := range ds.Queries[:10] {
		q, err := index.TextQuery(dq.Text)
		if err != nil {
			t.Fatal(err)
		}
		stats, err := cluster.Presearch(context.Background(), idx, q)
		if err != nil {
			t.Fatal(err)
		}
		req := bleve.NewSearchRequestOptions(q, 1000, 0, false)
		want, err := idx.Search(req)
		if err != nil {
			t.Fatal(err)
		}
		var got bleve.SearchResult
		if code := call(t, "POST", ts.URL+"/api/shard/search", cluster.SearchBody{Request: req, Stats: stats}, &got); code != http.StatusOK {
			t.Fatalf("query %s: status %d", dq.ID, code)
		}
		if got.Total != want.Total || len(got.Hits) != len(want.Hits) {
			t.Fatalf("query %s: total %d, %d hits; want %d, %d", dq.ID, got.Total, len(got.Hits), want.Total, len(want.Hits))
		}
		g, w := canonical(got.Hits), canonical(want.Hits)
		for i := range w {
			if g[i].ID != w[i].ID || math.Abs(g[i].Score-w[i].Score) > 1e-9 {
				t.Fatalf("query %s, hit %d: %s %v, want %s %v", dq.ID, i, g[i].ID, g[i].Score, w[i].ID, w[i].Score)
			}
		}
	}
}

// FuzzShardBodies sends arbitrary bodies to the shard endpoints that take
// one: every answer is 200 or a 4xx with a JSON error, never a 5xx or a
// panic.
func FuzzShardBodies(f *testing.F) {
	idx, _ := demoIndex(f)
	s, _, _ := newServer(f, idx, lexicalPipeline, nil)
	paths := []string{"/api/shard/search", "/api/shard/presearch", "/api/shard/docfreq", "/api/shard/payloads"}
	for _, seed := range []string{
		`{"request": {"query": {"match": "bank visa"}, "size": 10}}`,
		`{"request": {"query": {"match": "bank"}, "size": 5, "from": 2, "fields": ["*"], "sort": ["-_score", "_id"]}, "stats": {"docs": 10, "fields": {"_all": {"terms": 40, "doc_freq": {"bank": 3}}}}}`,
		`{"request": {"query": {"ids": ["Q268_R4"]}, "fields": ["title"]}}`,
		`{"request": {"query": {"query": "+title:visa"}, "highlight": {}}}`,
		`{"request": {"query": {"match": "bank"}}, "stats": {"docs": 0, "fields": {"_all": {"terms": 0, "doc_freq": {"bank": 99}}}}}`,
		`{"query": {"match": "bank visa"}}`, `{"query": {"prefix": "ba", "field": "text"}}`, `{"query": {"fuzzy": "bnak", "fuzziness": 2}}`,
		`{"terms": ["bank", "visa", ""]}`, `{"terms": ["bank"], "fields": ["title", "text", "_all", "nope"]}`, `{"terms": []}`, `{"terms": null}`, `{"ids": ["Q268_R4", "nope", ""]}`, `{"ids": [1]}`,
		`{}`, `{`, `null`, `[]`, `""`, `{"request": null}`, `{"request": {"query": {"geo_shape": {"shape": {"type": "point", "coordinates": [1]}}}}}`,
	} {
		for i := range paths {
			f.Add(i, seed)
		}
	}
	f.Fuzz(func(t *testing.T, path int, body string) {
		if path < 0 {
			path = -path
		}
		fuzzPost(t, s, paths[path%len(paths)], body)
	})
}

// TestShardSearchCompact: a search whose hits carry ids, scores and sort
// values alone is answered in the compact encoding to a client that
// accepts it, and it decodes to what the JSON answer holds; hits with
// fields are answered in JSON whatever the client accepts.
func TestShardSearchCompact(t *testing.T) {
	idx, _ := demoIndex(t)
	_, ts, _ := newServer(t, idx, lexicalPipeline, nil)
	q, err := index.TextQuery("best bank in Doha")
	if err != nil {
		t.Fatal(err)
	}
	search := func(req *bleve.SearchRequest, accept string) (string, []byte) {
		t.Helper()
		body, _ := json.Marshal(cluster.SearchBody{Request: req})
		r, _ := http.NewRequest("POST", ts.URL+"/api/shard/search", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d, %v: %s", resp.StatusCode, err, raw)
		}
		return resp.Header.Get("Content-Type"), raw
	}
	req := bleve.NewSearchRequestOptions(q, 20, 0, false)
	typ, raw := search(req, "text/html;q=0.5, "+cluster.ResultType+", application/json")
	if typ != cluster.ResultType {
		t.Fatalf("Content-Type %q, want %q", typ, cluster.ResultType)
	}
	got, err := cluster.DecodeResult(raw)
	if err != nil {
		t.Fatal(err)
	}
	typ, raw = search(req, "")
	var want bleve.SearchResult
	if err := json.Unmarshal(raw, &want); err != nil || !strings.HasPrefix(typ, "application/json") {
		t.Fatalf("without Accept: %q, %v", typ, err)
	}
	if got.Total != want.Total || len(got.Hits) != len(want.Hits) || len(got.Hits) == 0 {
		t.Fatalf("total %d, %d hits; JSON says %d, %d", got.Total, len(got.Hits), want.Total, len(want.Hits))
	}
	for i, h := range want.Hits {
		if g := got.Hits[i]; g.ID != h.ID || g.Score != h.Score || !slices.Equal(g.Sort, h.Sort) {
			t.Fatalf("hit %d: %s %v %v, JSON says %s %v %v", i, g.ID, g.Score, g.Sort, h.ID, h.Score, h.Sort)
		}
	}
	req.Fields = []string{"title"}
	if typ, _ := search(req, cluster.ResultType); !strings.HasPrefix(typ, "application/json") {
		t.Fatalf("hits with fields: Content-Type %q, want JSON", typ)
	}
}
