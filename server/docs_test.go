package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
)

func TestIndexAndDoc(t *testing.T) {
	_, ds := demoIndex(t)
	idx := newIndex(t, ds.Corpus[:50])
	_, ts, _ := newServer(t, idx, lexicalPipeline, func(c *Config) {
		c.Limits.MaxIndexDocs = 3
		c.Limits.MaxIndexBodyBytes = 4 << 10
	})
	url := ts.URL + "/api/index"
	add := IndexRequest{Add: []dataset.Doc{
		{ID: "new-1", Title: "Camel racing season", Text: "When does the camel racing season start at Al Shahaniya?", Metadata: map[string]any{"source": "test"}},
		{ID: "new-2", Title: "Falcon souq", Text: "Where can I buy a falcon hood in Souq Waqif?"},
	}}
	var res IndexResponse
	if code := call(t, "POST", url, add, &res); code != http.StatusOK {
		t.Fatalf("add: status %d", code)
	}
	if res.Added != 2 || res.Documents != 52 || !slices.Contains(res.Payloads, "terms") {
		t.Errorf("add: %+v", res)
	}
	var doc DocResponse
	if code := call(t, "GET", ts.URL+"/api/doc/new-1", nil, &doc); code != http.StatusOK ||
		doc.ID != "new-1" || doc.Title != add.Add[0].Title || doc.Text != add.Add[0].Text || doc.Metadata["source"] != "test" {
		t.Errorf("doc: %d %+v", code, doc)
	}
	// The new document is searchable and reranked: its terms payload was
	// computed at indexing (tfidf reads it).
	var sr SearchResponse
	call(t, "POST", ts.URL+"/api/search", `{"query": "camel racing season"}`, &sr)
	if len(sr.Hits) == 0 || sr.Hits[0].ID != "new-1" || sr.Hits[0].StageScores["tfidf"] <= 0 {
		t.Errorf("search for the new document: %+v", sr.Hits)
	}

	// Update new-1, delete new-2 and an id the index never held.
	upd := IndexRequest{Add: []dataset.Doc{{ID: "new-1", Title: "Camel racing", Text: "Races start in October."}}, Delete: []string{"new-2", "never-there"}}
	res = IndexResponse{}
	if code := call(t, "POST", url, upd, &res); code != http.StatusOK {
		t.Fatalf("update: status %d", code)
	}
	if res.Added != 1 || res.Deleted != 1 || !slices.Equal(res.Missing, []string{"never-there"}) || res.Documents != 51 {
		t.Errorf("update: %+v", res)
	}
	call(t, "GET", ts.URL+"/api/doc/new-1", nil, &doc)
	if doc.Text != "Races start in October." {
		t.Errorf("updated doc: %+v", doc)
	}
	var e ErrorBody
	if code := call(t, "GET", ts.URL+"/api/doc/new-2", nil, &e); code != http.StatusNotFound || !strings.Contains(e.Error, "new-2") {
		t.Errorf("deleted doc: %d %+v", code, e)
	}

	for _, tc := range []struct {
		name, body string
		code       int
		msg        string
	}{
		{"nothing", `{}`, 400, "nothing to do"},
		{"malformed", `{"add": [{"_id": "x"`, 400, "malformed JSON"},
		{"wrong shape", `{"add": {"_id": "x"}}`, 400, "add must be an array"},
		{"number to delete", `{"delete": [7]}`, 400, "each element of delete must be a string, not number"},
		{"id of a number", `{"add": [{"_id": 7, "title": "t"}]}`, 400, "add._id must be a string, not number"},
		{"unknown field", `{"add": [{"id": "x", "title": "t"}]}`, 400, `unknown field "id"`},
		{"empty id", `{"add": [{"_id": "", "title": "t"}]}`, 400, "add[0]: empty id"},
		{"space in id", `{"delete": ["a b"]}`, 400, "delete[0]: id \"a b\" contains white space"},
		{"duplicate id", `{"add": [{"_id": "d", "title": "t"}, {"_id": "d", "title": "u"}]}`, 400, `add[1]: id "d" appears twice`},
		{"duplicate delete", `{"delete": ["Q268_R4", "Q268_R4"]}`, 400, `delete[1]: id "Q268_R4" appears twice`},
		{"no text", `{"add": [{"_id": "d"}]}`, 400, "neither title nor text"},
		{"too many", `{"delete": ["a", "b", "c", "d"]}`, 400, "4 documents in one request; the limit is 3"},
		{"oversize", `{"add": [{"_id": "d", "title": "` + strings.Repeat("x", 5000) + `"}]}`, 413, "larger than the limit of 4096 bytes"},
		{"long id", fmt.Sprintf(`{"delete": [%q]}`, strings.Repeat("i", 600)), 400, "id of 600 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e ErrorBody
			code, raw, err := do("POST", url, tc.body, "")
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &e); err != nil || code != tc.code || !strings.Contains(e.Error, tc.msg) {
				t.Errorf("got %d %s, want %d with %q", code, raw, tc.code, tc.msg)
			}
		})
	}
	// Nothing of the refused requests reached the index.
	if n, _ := idx.DocCount(); n != 51 {
		t.Errorf("%d documents after refused requests, want 51", n)
	}
}

// TestQuoteCutsBetweenCharacters: a long id in an error message is
// shortened without splitting a character into invalid UTF-8.
func TestQuoteCutsBetweenCharacters(t *testing.T) {
	for _, id := range []string{strings.Repeat("é", 60), "x" + strings.Repeat("€", 40), strings.Repeat("a", 100)} {
		if q := quote(id); !utf8.ValidString(q) || !strings.HasSuffix(q, `…"`) || len(q) > 80+len(`""…`) {
			t.Errorf("quote(%q) = %q", id, q)
		}
	}
}

func TestHealthMetricsPage(t *testing.T) {
	idx, _ := demoIndex(t)
	_, ts, _ := newServer(t, idx, lexicalPipeline, func(c *Config) { c.Examples = []string{"best bank in Doha"} })
	var h Health
	if code := call(t, "GET", ts.URL+"/healthz", nil, &h); code != http.StatusOK ||
		h.Status != "ok" || h.Documents != 500 || h.Generation != 1 || h.Window != 30 ||
		!slices.Equal(h.Stages, []string{"tfidf", "overlap"}) || !slices.Equal(h.Examples, []string{"best bank in Doha"}) {
		t.Errorf("healthz: %d %+v", code, h)
	}
	for range 3 {
		call(t, "POST", ts.URL+"/api/search", `{"query": "visa"}`, nil)
	}
	call(t, "POST", ts.URL+"/api/search", `{"query": 1}`, nil)
	call(t, "GET", ts.URL+"/api/doc/Q268_R4", nil, nil)
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw := readAll(t, resp)
	for _, want := range []string{
		`semrank_http_requests_total{code="200",endpoint="search"} 3`,
		`semrank_http_requests_total{code="400",endpoint="search"} 1`,
		`semrank_http_requests_total{code="200",endpoint="doc"} 1`,
		`semrank_http_request_duration_seconds_count{endpoint="search"} 4`,
		`semrank_stage_duration_seconds_count{stage="first_stage"} 3`,
		`semrank_stage_duration_seconds_count{stage="tfidf"} 3`,
		`semrank_stage_duration_seconds_count{stage="overlap"} 3`,
		`semrank_stage_duration_seconds_count{stage="fusion"} 3`,
		`semrank_pipeline_generation 1`,
		`semrank_pipeline_reloads_total{result="ok"} 1`,
	} {
		if !strings.Contains(raw, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	for path, want := range map[string]string{"/": `id="q"`, "/app.js": "api/search", "/style.css": ".hit"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, body lacks %q", path, resp.StatusCode, want)
		}
	}
	if resp, err := http.Post(ts.URL+"/", "text/plain", nil); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %v %v", resp.StatusCode, err)
	}
}

// TestPartialWriteAnswer: an indexing error after some batches were
// committed says which documents are in the index, whatever its cause.
func TestPartialWriteAnswer(t *testing.T) {
	s, _, _ := newServer(t, newIndex(t, nil), lexicalPipeline, nil)
	for _, tc := range []struct {
		name string
		err  error
		code int
		want string
	}{
		{"timeout", &partialWrite{err: fmt.Errorf("index: %w", context.DeadlineExceeded), written: 1000, total: 2500}, 503,
			"request took longer than the limit of " + s.limits.Timeout.String() + "; the first 1000 of the 2500 documents to add were written in full, the others may be missing or lack their payloads (send them again), and nothing was deleted"},
		{"encoder", &partialWrite{err: errors.New("index: s2net payload of \"d7\": boom"), written: 0, total: 3}, 500,
			"index: s2net payload of \"d7\": boom; no document was written in full and nothing was deleted; send them again"},
		{"delete", &partialWrite{err: errors.New("index: batch: disk full"), written: 3, total: 3, deleting: true}, 500,
			"index: batch: disk full; all 3 documents to add were written; the deletions may be incomplete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s.writeError(rec, httptest.NewRequest("POST", "/api/index", nil), tc.err)
			var e ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
				t.Fatal(err)
			}
			if rec.Code != tc.code || e.Error != tc.want {
				t.Errorf("got %d %q, want %d %q", rec.Code, e.Error, tc.code, tc.want)
			}
		})
	}
}

// TestIndexWaitTimesOut: a batch waiting behind another batch or a reload
// keeps to the request timeout, and the answer says nothing was written.
func TestIndexWaitTimesOut(t *testing.T) {
	s, ts, _ := newServer(t, newIndex(t, nil), lexicalPipeline, func(c *Config) { c.Limits.Timeout = 50 * time.Millisecond })
	if err := s.writeMu.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.writeMu.Unlock() // held for the whole request
	var e ErrorBody
	code := call(t, "POST", ts.URL+"/api/index", `{"add": [{"_id": "d1", "text": "visa"}]}`, &e)
	if code != http.StatusServiceUnavailable || !strings.Contains(e.Error, "no document was written") {
		t.Errorf("got %d %+v, want 503 saying nothing was written", code, e)
	}
}

// TestReadOnlyIndexRefusesWrites: over an index opened read-only, POST
// /api/index answers 403 saying why, and searches are answered.
func TestReadOnlyIndexRefusesWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idx")
	idx, err := buildIndex(path, []dataset.Doc{{ID: "d1", Text: "visa renewal at the immigration office"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := index.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, ts, _ := newServer(t, ro, lexicalPipeline, nil)
	var e ErrorBody
	if code := call(t, "POST", ts.URL+"/api/index", `{"add": [{"_id": "d2", "text": "bank"}]}`, &e); code != http.StatusForbidden || !strings.Contains(e.Error, "read-only") {
		t.Errorf("index over a read-only index: %d %+v, want 403 naming it read-only", code, e)
	}
	var res SearchResponse
	if code := call(t, "POST", ts.URL+"/api/search", `{"query": "visa renewal"}`, &res); code != http.StatusOK || len(res.Hits) != 1 {
		t.Errorf("search over a read-only index: %d, %d hits", code, len(res.Hits))
	}
}

// TestAdminTokenGuardsWrites: with an admin token configured, the endpoints
// that change what the server answers refuse requests without it, and
// nothing is written; searches and reads need no token.
func TestAdminTokenGuardsWrites(t *testing.T) {
	s, ts, _ := newServer(t, newIndex(t, nil), lexicalPipeline, func(c *Config) { c.AdminToken = "sesame" })
	add := `{"add": [{"_id": "guarded", "text": "visa renewal"}]}`
	for _, tc := range []struct {
		name, method, path, body, token string
		want                            int
	}{
		{"index without token", "POST", "/api/index", add, "", http.StatusUnauthorized},
		{"index with a wrong token", "POST", "/api/index", add, "open", http.StatusUnauthorized},
		{"reload without token", "POST", "/api/admin/reload", "{}", "", http.StatusUnauthorized},
		{"search without token", "POST", "/api/search", `{"query": "visa"}`, "", http.StatusOK},
		{"read without token", "GET", "/api/doc/guarded", "", "", http.StatusNotFound},
		{"index with the token", "POST", "/api/index", add, "sesame", http.StatusOK},
		{"read after the write", "GET", "/api/doc/guarded", "", "", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			code, raw, err := do(tc.method, ts.URL+tc.path, body, tc.token)
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.want {
				t.Errorf("status %d, want %d: %s", code, tc.want, raw)
			}
		})
	}
	if _, ok, err := s.store.Doc("guarded"); err != nil || !ok {
		t.Errorf("the authorised write is missing: ok=%v err=%v", ok, err)
	}
}

// TestAdminTokenScheme: the Bearer scheme name is case-insensitive, and a
// refusal says which scheme to use (WWW-Authenticate).
func TestAdminTokenScheme(t *testing.T) {
	_, ts, _ := newServer(t, newIndex(t, nil), lexicalPipeline, func(c *Config) { c.AdminToken = "sesame" })
	for _, tc := range []struct {
		auth string
		want int
	}{
		{"Bearer sesame", http.StatusOK},
		{"bearer sesame", http.StatusOK},
		{"BEARER  sesame", http.StatusOK},
		{"Basic sesame", http.StatusUnauthorized},
		{"sesame", http.StatusUnauthorized},
		{"Bearer open", http.StatusUnauthorized},
	} {
		req, err := http.NewRequest("POST", ts.URL+"/api/admin/reload", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", tc.auth)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%q: status %d, want %d", tc.auth, resp.StatusCode, tc.want)
		}
		if got := resp.Header.Get("WWW-Authenticate"); (resp.StatusCode == http.StatusUnauthorized) != strings.HasPrefix(got, "Bearer") {
			t.Errorf("%q: status %d, WWW-Authenticate %q", tc.auth, resp.StatusCode, got)
		}
	}
}
