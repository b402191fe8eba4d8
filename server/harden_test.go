package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/search"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// TestQueryBoostAndSyntax: a boost that would make scores non-finite (or
// one past MaxBoost) and a query string that does not parse are the
// client's errors, 400s naming them, rather than a 500 from the fusion, an
// empty 200 from the JSON encoder, or a 200 with no hits.
func TestQueryBoostAndSyntax(t *testing.T) {
	idx, _ := demoIndex(t)
	_, ts, _ := newServer(t, idx, lexicalPipeline, nil)
	for _, tc := range []struct {
		name, body string
		code       int
		msg        string
	}{
		{"huge boost", `{"query": {"match": "time", "boost": 1e308}}`, 400, "boost 1e+308 is out of range"},
		{"huge boost, rerank off", `{"query": {"match": "time", "boost": 1e308}, "rerank": {"enabled": false}}`, 400, "boost 1e+308 is out of range"},
		{"huge negative boost", `{"query": {"match": "time", "boost": -1e300}}`, 400, "boost -1e+300 is out of range"},
		{"nested boost", `{"query": {"conjuncts": [{"match": "visa"}, {"disjuncts": [{"term": "bank", "boost": 1e200}]}]}}`, 400, "boost 1e+200 is out of range"},
		{"boolean boost", `{"query": {"must": {"conjuncts": [{"match": "visa"}]}, "should": {"disjuncts": [{"match": "bank", "boost": 1e20}]}}}`, 400, "boost 1e+20 is out of range"},
		{"boost in a query string", `{"query": {"query": "visa^1e308 bank"}}`, 400, "boost 1e+308 is out of range"},
		{"query string's own boost", `{"query": {"query": "visa", "boost": 1e300}}`, 400, "boost 1e+300 is out of range"},
		{"query string of punctuation", `{"query": {"query": "title:(((("}}`, 400, `query string "title:((((" has no searchable terms: "((((" analyze to nothing`},
		{"query string of stop words", `{"query": {"query": "the +of"}}`, 400, `has no searchable terms: "of", "the" analyze to nothing`},
		{"empty query string", `{"query": {"query": ""}}`, 400, `query string "" has no searchable terms: it is empty`},
		{"unbalanced quote", `{"query": {"query": "\"visa renewal"}}`, 400, `query string "\"visa renewal" does not parse: parse error: unterminated quote`},
		{"nested query string of punctuation", `{"query": {"disjuncts": [{"match": "visa"}, {"query": "+("}]}}`, 400, `query string "+(" has no searchable terms`},
		{"query string with a stop word", `{"query": {"query": "+the visa"}}`, 200, ""},
		{"query string excluding only", `{"query": {"query": "-visa"}}`, 200, ""},
		{"boost within range", `{"query": {"match": "time", "boost": 1000}}`, 200, ""},
		{"negative boost within range", `{"query": {"match": "visa", "boost": -2}, "rerank": {"enabled": false}}`, 200, ""},
		{"query string boost within range", `{"query": {"query": "visa^5 bank"}}`, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, raw, err := do("POST", ts.URL+"/api/search", tc.body, "")
			if err != nil {
				t.Fatal(err)
			}
			if code == 200 && tc.code == 200 {
				var res SearchResponse
				if err := json.Unmarshal(raw, &res); err != nil {
					t.Errorf("200 whose body is not a search response (%v): %q", err, raw)
				}
				return
			}
			var e ErrorBody
			if err := json.Unmarshal(raw, &e); err != nil || code != tc.code || e.Status != code || !strings.Contains(e.Error, tc.msg) {
				t.Errorf("got %d %s, want %d with %q", code, raw, tc.code, tc.msg)
			}
		})
	}
}

// TestAnswerEncodingFails: an answer that cannot be encoded (a non-finite
// number) is a logged 500 naming the problem, never a 200 with an empty or
// cut body.
func TestAnswerEncodingFails(t *testing.T) {
	idx, _ := demoIndex(t)
	var logs lockedBuffer
	s, _, _ := newServer(t, idx, lexicalPipeline, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	h := s.instrument("test", func(w http.ResponseWriter, _ *http.Request) error {
		return writeJSON(w, http.StatusOK, SearchResponse{MaxScore: math.Inf(1)})
	})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/api/search", nil))
	var e ErrorBody
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != http.StatusInternalServerError || !strings.Contains(e.Error, "encoding the answer") || !strings.Contains(e.Error, "+Inf") {
		t.Errorf("got %d %q, want a 500 naming the encoding error", w.Code, w.Body)
	}
	if !strings.Contains(logs.String(), "request failed") {
		t.Errorf("the encoding error was not logged: %s", logs.String())
	}
}

// TestHighlightLongField: a search with highlight over a document whose
// field holds its words hundreds of thousands of times answers in time,
// with the field's first matches marked. Bleve's highlighter scores every
// fragment against every match, quadratic in the matches, and never looks
// at the request's context: unbounded, this search ran for minutes.
func TestHighlightLongField(t *testing.T) {
	idx := newIndex(t, []dataset.Doc{{ID: "d1", Title: "Visa office", Text: "Where to renew a visa in Doha"}})
	_, ts, _ := newServer(t, idx, lexicalPipeline, func(c *Config) { c.Limits.Timeout = 30 * time.Second })
	long := strings.Repeat("visa renewal ", 100_000) // 1.3 MB, 200,000 matches
	var ir IndexResponse
	if code := call(t, "POST", ts.URL+"/api/index", IndexRequest{Add: []dataset.Doc{{ID: "long", Title: "Visa renewal", Text: long}}}, &ir); code != http.StatusOK {
		t.Fatalf("adding the long document: status %d", code)
	}
	client := &http.Client{Timeout: 45 * time.Second}
	req, err := http.NewRequest("POST", ts.URL+"/api/search", strings.NewReader(`{"query": "visa renewal", "highlight": true}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("search with highlight: %v (after %s)", err, time.Since(start).Round(time.Millisecond))
	}
	var res SearchResponse
	if err := json.Unmarshal([]byte(readAll(t, resp)), &res); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	found := false
	for _, h := range res.Hits {
		if h.ID != "long" {
			continue
		}
		found = true
		frags := h.Fragments["text"]
		if len(frags) != 1 || !strings.HasPrefix(frags[0], "<mark>visa</mark> <mark>renewal</mark>") || len(frags[0]) > 2000 {
			t.Errorf("the long text's fragments: %.300q", frags)
		}
	}
	if !found {
		t.Errorf("the long document is not among the hits: %+v", res.Hits)
	}
}

// TestBoundedHighlighterKeepsFirstMatches: the highlighter hands Bleve's
// at most maxHighlightLocations of a field's matches, the first ones, and
// leaves the hit's own locations as they were.
func TestBoundedHighlighterKeepsFirstMatches(t *testing.T) {
	tlm, ordered := manyLocations(3 * maxHighlightLocations)
	kept := firstLocations(tlm, maxHighlightLocations)
	n := 0
	for _, locs := range kept {
		for _, l := range locs {
			n++
			if l.Start >= ordered[maxHighlightLocations].Start {
				t.Errorf("kept a location at %d, past the first %d", l.Start, maxHighlightLocations)
			}
		}
	}
	if n != maxHighlightLocations {
		t.Errorf("kept %d locations, want %d", n, maxHighlightLocations)
	}
	if got := len(tlm["visa"]) + len(tlm["renewal"]); got != 3*maxHighlightLocations {
		t.Errorf("the original map holds %d locations after trimming, want %d", got, 3*maxHighlightLocations)
	}
	// Under the cap nothing is copied.
	small, _ := manyLocations(10)
	if got := firstLocations(small, maxHighlightLocations); fmt.Sprint(got) != fmt.Sprint(small) {
		t.Errorf("a field under the cap was trimmed")
	}
}

// manyLocations returns a location map of n matches alternating between
// "visa" and "renewal", as in "visa renewal visa renewal …", and the
// same locations in order.
func manyLocations(n int) (search.TermLocationMap, []*search.Location) {
	tlm := search.TermLocationMap{}
	var ordered []*search.Location
	for i := range n {
		term, start := "visa", uint64(i/2*13)
		if i%2 == 1 {
			term, start = "renewal", start+5
		}
		l := &search.Location{Pos: uint64(i + 1), Start: start, End: start + uint64(len(term))}
		tlm[term] = append(tlm[term], l)
		ordered = append(ordered, l)
	}
	return tlm, ordered
}

// TestWritesRefuseOtherOrigins: a page on another site can send a POST
// with a body of no type, or a CORS-safelisted one, without the browser
// asking the server first (a "simple" request, as fetch with mode
// "no-cors" sends). The write endpoints refuse such a request, and any
// the browser marks as another site's (Sec-Fetch-Site, or an Origin that
// is not the Host); searches do not change.
func TestWritesRefuseOtherOrigins(t *testing.T) {
	idx := newIndex(t, []dataset.Doc{{ID: "d1", Text: "visa renewal"}})
	_, ts, _ := newServer(t, idx, lexicalPipeline, nil)
	host := strings.TrimPrefix(ts.URL, "http://")
	add := `{"add": [{"_id": "csrf", "text": "bank"}]}`
	for _, tc := range []struct {
		name, path, ctype, origin, site, body string
		code                                  int
		msg                                   string
	}{
		{"index, no type", "/api/index", "", "", "", add, 415, "writes require Content-Type application/json"},
		{"index, text/plain", "/api/index", "text/plain", "", "", add, 415, "is not JSON"},
		{"index, form", "/api/index", "application/x-www-form-urlencoded", "", "", add, 415, "is not JSON"},
		{"reload, no type, no body", "/api/admin/reload", "", "", "", "", 415, "writes require Content-Type application/json"},
		{"reload, form, no body", "/api/admin/reload", "application/x-www-form-urlencoded", "", "", "", 415, "is not JSON"},
		{"reload, no type, empty object", "/api/admin/reload", "", "", "", "{}", 415, "writes require"},
		{"index, other origin", "/api/index", "application/json", "http://evil.example", "", add, 403, `refused a write from a page on another site (Origin "http://evil.example"`},
		{"index, other port", "/api/index", "application/json", "http://" + strings.Split(host, ":")[0] + ":1", "", add, 403, "page on another site"},
		{"index, null origin", "/api/index", "application/json", "null", "", add, 403, `Origin "null"`},
		{"reload, other origin", "/api/admin/reload", "application/json", "https://evil.example", "", "{}", 403, "page on another site"},
		{"index, malformed origin", "/api/index", "application/json", "::", "", add, 403, "page on another site"},
		{"index, cross-site fetch", "/api/index", "application/json", "", "cross-site", add, 403, `Sec-Fetch-Site "cross-site"`},
		{"reload, same-site fetch", "/api/admin/reload", "application/json", "http://" + host, "same-site", "", 403, "page on another site"},
		{"search, no type", "/api/search", "", "", "", `{"query": "visa"}`, 200, ""},
		{"search, other origin", "/api/search", "application/json", "http://evil.example", "cross-site", `{"query": "visa"}`, 200, ""},
		{"reload, same origin", "/api/admin/reload", "application/json", "http://" + host, "", "", 200, ""},
		{"reload, same-origin fetch", "/api/admin/reload", "application/json", "http://" + host, "same-origin", "", 200, ""},
		{"reload, JSON, no body", "/api/admin/reload", "application/json", "", "", "", 200, ""},
		{"index, same origin, +json", "/api/index", "application/vnd.semrank+json", "http://" + host, "", add, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", ts.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.site != "" {
				req.Header.Set("Sec-Fetch-Site", tc.site)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw := readAll(t, resp)
			var e ErrorBody
			if resp.StatusCode != tc.code || tc.code != 200 && (json.Unmarshal([]byte(raw), &e) != nil || e.Status != tc.code || !strings.Contains(e.Error, tc.msg)) {
				t.Errorf("got %d %s, want %d with %q", resp.StatusCode, raw, tc.code, tc.msg)
			}
		})
	}
}

// TestIndexDocumentLimits: a document past Limits.MaxDocBytes is a 413
// naming it and the limit, before anything is written; a body that is not
// valid UTF-8 is a 400 naming the document that holds the bad bytes,
// rather than being read with the bytes replaced.
func TestIndexDocumentLimits(t *testing.T) {
	idx := newIndex(t, []dataset.Doc{{ID: "d1", Text: "visa renewal"}})
	_, ts, _ := newServer(t, idx, lexicalPipeline, func(c *Config) { c.Limits.MaxDocBytes = 1000 })
	big := strings.Repeat("visa ", 200) // 1000 bytes of text, with the title past the limit
	for _, tc := range []struct {
		name, body string
		code       int
		msg        string
	}{
		{"text past the limit", `{"add": [{"_id": "ok", "text": "bank"}, {"_id": "big", "title": "t", "text": "` + big + `"}]}`, 413,
			`add[1] ("big"): document of 1001 bytes (title, text and metadata); the limit is 1000 bytes`},
		{"metadata past the limit", `{"add": [{"_id": "meta", "text": "bank", "metadata": {"note": "` + big + `"}}]}`, 413, `add[0] ("meta"): document of`},
		{"at the limit", `{"add": [{"_id": "edge", "text": "` + big + `"}]}`, 200, ""},
		{"invalid UTF-8 in text", "{\"add\": [{\"_id\": \"ok\", \"text\": \"bank\"}, {\"_id\": \"bad\", \"text\": \"caf\xe9\"}]}", 400,
			`add[1] ("bad"): not valid UTF-8 (byte 0xe9 at offset 27 of the document)`},
		{"invalid UTF-8 in an id", "{\"add\": [{\"_id\": \"b\xffd\", \"text\": \"bank\"}]}", 400, `add[0]: not valid UTF-8`},
		{"invalid UTF-8 in a deletion", "{\"delete\": [\"a\", \"b\xc0\"]}", 400, `delete[1]: not valid UTF-8`},
		{"invalid UTF-8 in metadata", "{\"add\": [{\"_id\": \"m\", \"text\": \"bank\", \"metadata\": {\"k\xfe\": 1}}]}", 400, `add[0] ("m"): not valid UTF-8`},
		{"lone surrogate escape", `{"add": [{"_id": "s", "text": "bank \ud800 visa"}]}`, 400, `add[0] ("s"): \ud800 is half of a UTF-16 surrogate pair`},
		{"low surrogate alone", `{"add": [{"_id": "s", "text": "\udc00"}]}`, 400, `\udc00 is half of a UTF-16 surrogate pair`},
		{"invalid UTF-8 outside the documents", "{\"add\": [{\"_id\": \"x\", \"text\": \"bank\"}], \"\xff\": 1}", 400, "request body: not valid UTF-8 (byte 0xff at offset"},
		{"surrogate pair", `{"add": [{"_id": "pair", "text": "bank \ud83d\ude00 \\ud800"}]}`, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, raw, err := do("POST", ts.URL+"/api/index", tc.body, "")
			if err != nil {
				t.Fatal(err)
			}
			var e ErrorBody
			if code != tc.code || tc.code != 200 && (json.Unmarshal(raw, &e) != nil || !strings.Contains(e.Error, tc.msg)) {
				t.Errorf("got %d %s, want %d with %q", code, raw, tc.code, tc.msg)
			}
		})
	}
	for _, id := range []string{"ok", "big", "meta", "bad", "m", "s"} {
		if _, ok, _ := idx.Doc(id); ok {
			t.Errorf("%s was written by a refused request", id)
		}
	}
	if d, ok, _ := idx.Doc("pair"); !ok || d.Text != "bank \U0001F600 \\ud800" {
		t.Errorf("the document with a surrogate pair: %v %+v", ok, d)
	}
}

// TestIndexQueueBounded: /api/index bodies waiting for the write lock are
// bounded by Limits.MaxQueuedIndexBytes: past it a request is refused at
// once with 503 and Retry-After, before its body is read, rather than
// held in memory behind the others.
func TestIndexQueueBounded(t *testing.T) {
	s, ts, _ := newServer(t, newIndex(t, nil), lexicalPipeline, func(c *Config) {
		c.Limits.MaxIndexBodyBytes = 1000
		c.Limits.MaxQueuedIndexBytes = 1500
	})
	if err := s.writeMu.Lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	body := `{"add": [{"_id": "q1", "text": "` + strings.Repeat("visa ", 160) + `"}]}` // 830 bytes
	first := make(chan int, 1)
	go func() {
		code, _, _ := do("POST", ts.URL+"/api/index", body, "")
		first <- code
	}()
	// Wait until the first request holds its share of the queue.
	for deadline := time.Now().Add(10 * time.Second); s.queued.held() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the first request never queued")
		}
		time.Sleep(time.Millisecond)
	}
	req, err := http.NewRequest("POST", ts.URL+"/api/index", strings.NewReader(strings.Replace(body, "q1", "q2", 1)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw := readAll(t, resp)
	var e ErrorBody
	if json.Unmarshal([]byte(raw), &e) != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(e.Error, "bytes of /api/index requests are waiting") {
		t.Errorf("second request: %d (Retry-After %q) %s, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), raw)
	}
	s.writeMu.Unlock()
	if code := <-first; code != http.StatusOK {
		t.Errorf("first request: status %d", code)
	}
	if n := s.queued.held(); n != 0 {
		t.Errorf("%d bytes still counted as queued after both requests", n)
	}
	// With the queue empty, the second is taken.
	if code, raw, _ := do("POST", ts.URL+"/api/index", strings.Replace(body, "q1", "q2", 1), ""); code != http.StatusOK {
		t.Errorf("second request again: %d %s", code, raw)
	}
}

// TestFailedReloadLogged: a reload that fails (here, the pipeline file
// broken since the start) writes a log line saying so and naming the
// error, as a reload on SIGHUP does.
func TestFailedReloadLogged(t *testing.T) {
	idx, _ := demoIndex(t)
	var logs lockedBuffer
	_, ts, path := newServer(t, idx, lexicalPipeline, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	writePipeline(t, filepath.Dir(path), "stages:\n  - type: no_such_stage\n")
	var e ErrorBody
	if code := call(t, "POST", ts.URL+"/api/admin/reload", nil, &e); code != http.StatusInternalServerError {
		t.Fatalf("reload of a broken file: %d %+v", code, e)
	}
	l := logs.String()
	if !strings.Contains(l, "reload failed") || !strings.Contains(l, "no_such_stage") {
		t.Errorf("no log line for the failed reload:\n%s", l)
	}
}

// slowEncoder takes 20 ms over each document: a costly model, or Bleve
// analysing a long text.
type slowEncoder struct{}

func (slowEncoder) PayloadName() string { return "test_slow" }
func (slowEncoder) ModelID() string     { return "slow-1" }
func (slowEncoder) EncodePayload(dataset.Doc) ([]byte, error) {
	time.Sleep(20 * time.Millisecond)
	return []byte{1}, nil
}

// slowStage reads test_slow payloads (scores 0: only its encoder matters).
type slowStage struct{}

func (slowStage) Name() string                          { return "slow" }
func (slowStage) PayloadEncoder() rerank.PayloadEncoder { return slowEncoder{} }
func (slowStage) Score(_ context.Context, _ rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	return make([]float64, len(cs)), nil
}

func init() {
	rerank.RegisterStage("test_slow", func(rerank.StageSpec, rerank.Env) (rerank.Stage, error) { return slowStage{}, nil })
}

// TestIndexWritesInParts: /api/index writes its documents in parts of
// about Limits.MaxDocBytes, looking at the timeout between them, so a
// request past its timeout stops after the part in hand, with the parts
// before it written and said so, rather than running its one batch to
// the end (Bleve's batch ignores the context).
func TestIndexWritesInParts(t *testing.T) {
	idx := newIndex(t, nil)
	_, ts, _ := newServer(t, idx, "stages:\n  - type: test_slow\n", func(c *Config) {
		c.Limits.Timeout = 100 * time.Millisecond
		c.Limits.MaxDocBytes = 100
	})
	var req IndexRequest
	for i := range 40 {
		req.Add = append(req.Add, dataset.Doc{ID: fmt.Sprintf("p%02d", i), Text: strings.Repeat("visa ", 12)}) // 60 bytes: a part each
	}
	start := time.Now()
	var e ErrorBody
	code := call(t, "POST", ts.URL+"/api/index", req, &e)
	took := time.Since(start)
	var written int
	if _, err := fmt.Sscanf(e.Error[strings.Index(e.Error, "the first "):], "the first %d of the 40 documents", &written); err != nil ||
		code != http.StatusServiceUnavailable || written < 1 || written >= 40 {
		t.Fatalf("got %d %+v, want 503 saying some of the 40 documents were written", code, e)
	}
	if n, _ := idx.DocCount(); n != uint64(written) {
		t.Errorf("%d documents in the index, the answer says %d", n, written)
	}
	if took > 600*time.Millisecond { // 40 documents take 800 ms
		t.Errorf("the request took %s, past its timeout of 100ms by more than a part", took)
	}
}

func TestByBytes(t *testing.T) {
	doc := func(n int) dataset.Doc { return dataset.Doc{ID: "d", Text: strings.Repeat("x", n)} }
	for _, tc := range []struct {
		sizes []int
		limit int64
		want  string
	}{
		{nil, 10, "[]"},
		{[]int{3, 3, 3}, 10, "[3]"},
		{[]int{5, 5, 5}, 10, "[2 1]"},
		{[]int{11, 2, 20, 3}, 10, "[1 1 1 1]"},
		{[]int{4, 4, 12, 1, 1}, 10, "[2 1 2]"},
	} {
		var docs []dataset.Doc
		for _, n := range tc.sizes {
			docs = append(docs, doc(n))
		}
		var lens []int
		total := 0
		for _, p := range byBytes(docs, tc.limit) {
			lens = append(lens, len(p))
			total += len(p)
		}
		if got := fmt.Sprint(lens); got != tc.want && !(tc.want == "[]" && lens == nil) || total != len(docs) {
			t.Errorf("byBytes(%v, %d): parts of %v, want %s", tc.sizes, tc.limit, lens, tc.want)
		}
	}
}
