package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

func TestSearchMatchesLibrary(t *testing.T) {
	idx, ds := demoIndex(t)
	s, ts, path := newServer(t, idx, lexicalPipeline, nil)
	p, _, err := rerank.LoadPipeline(path, rerank.EnvFor(idx))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range ds.Queries[:5] {
		text := q.FullText()
		var res SearchResponse
		if code := call(t, "POST", ts.URL+"/api/search", SearchRequest{Query: jsonString(text), Size: intp(10), Fields: []string{"title"},
			Rerank: &RerankOptions{Compare: true}}, &res); code != http.StatusOK {
			t.Fatalf("%s: status %d", q.ID, code)
		}
		want := libraryRerank(t, idx, p, text)
		if !res.Reranked || res.Generation != s.Generation() || res.Window != 30 || strings.Join(res.Stages, ",") != "tfidf,overlap" {
			t.Errorf("%s: reranked %v generation %d window %d stages %v", q.ID, res.Reranked, res.Generation, res.Window, res.Stages)
		}
		if len(res.Hits) != min(10, len(want)) {
			t.Fatalf("%s: %d hits, want %d", q.ID, len(res.Hits), min(10, len(want)))
		}
		for i, h := range res.Hits {
			w := want[i]
			if h.ID != w.ID || h.Rank != i+1 || h.FirstStageRank != w.Rank || !near(h.FirstStageScore, w.Candidate.Score) || !near(h.Score, w.Score) {
				t.Errorf("%s hit %d: got %s rank %d first %d/%.4f score %.4f, want %s first %d/%.4f score %.4f", q.ID, i, h.ID, h.Rank,
					h.FirstStageRank, h.FirstStageScore, h.Score, w.ID, w.Rank, w.Candidate.Score, w.Score)
			}
			for j, name := range p.StageNames() {
				if !near(h.StageScores[name], w.StageScores[j]) {
					t.Errorf("%s hit %d stage %s: %v, want %v", q.ID, i, name, h.StageScores[name], w.StageScores[j])
				}
			}
			if title, _ := h.Fields["title"].(string); title == "" || len(h.Fields) != 1 {
				t.Errorf("%s hit %d: fields %v, want the title only", q.ID, i, h.Fields)
			}
		}
		// The first-stage list of the same page, each with where it went.
		rerankedAt := map[string]int{}
		for j, w := range want {
			rerankedAt[w.ID] = j + 1
		}
		if len(res.FirstStage) != len(res.Hits) {
			t.Fatalf("%s: first-stage list of %d, want %d", q.ID, len(res.FirstStage), len(res.Hits))
		}
		for i, h := range res.FirstStage {
			if h.Rank != i+1 || h.FirstStageRank != i+1 || h.RerankedRank != rerankedAt[h.ID] || h.Fields["title"] == nil {
				t.Errorf("%s first-stage %d: %+v, reranked at %d", q.ID, i, h, rerankedAt[h.ID])
			}
		}
	}
}

func TestSearchOptions(t *testing.T) {
	idx, _ := demoIndex(t)
	_, ts, _ := newServer(t, idx, lexicalPipeline, nil)
	search := func(req string) SearchResponse {
		t.Helper()
		var res SearchResponse
		if code := call(t, "POST", ts.URL+"/api/search", req, &res); code != http.StatusOK {
			t.Fatalf("%s: status %d", req, code)
		}
		return res
	}
	const q = `"where can I renew my visa in Qatar"`
	full := search(`{"query": ` + q + `, "size": 12}`)

	t.Run("paging", func(t *testing.T) {
		page := search(`{"query": ` + q + `, "size": 4, "from": 4}`)
		for i, h := range page.Hits {
			if h.ID != full.Hits[4+i].ID || h.Rank != 5+i {
				t.Errorf("hit %d: %s rank %d, want %s rank %d", i, h.ID, h.Rank, full.Hits[4+i].ID, 5+i)
			}
		}
	})
	t.Run("rerank off", func(t *testing.T) {
		off := search(`{"query": ` + q + `, "size": 30, "rerank": {"enabled": false}}`)
		if off.Reranked || off.Window != 0 || len(off.Stages) != 0 {
			t.Errorf("reranked %v window %d stages %v", off.Reranked, off.Window, off.Stages)
		}
		moved := false
		for i, h := range off.Hits {
			if h.FirstStageRank != i+1 || h.StageScores != nil || h.Score != h.FirstStageScore {
				t.Errorf("hit %d: %+v", i, h)
			}
			moved = moved || i < len(full.Hits) && h.ID != full.Hits[i].ID
		}
		if !moved {
			t.Error("reranking moved nothing: the test query should show a difference")
		}
		for _, h := range full.Hits {
			if h.ID != off.Hits[h.FirstStageRank-1].ID {
				t.Errorf("%s: first-stage rank %d, but the first stage has %s there", h.ID, h.FirstStageRank, off.Hits[h.FirstStageRank-1].ID)
			}
		}
	})
	t.Run("highlight", func(t *testing.T) {
		for _, query := range []string{q, `{"query": "\"exit permit\""}`} {
			h := search(`{"query": ` + query + `, "size": 5, "highlight": true}`)
			marked := 0
			for _, hit := range h.Hits {
				for _, frags := range hit.Fragments {
					for _, f := range frags {
						if strings.Contains(f, "<mark>") {
							marked++
						}
					}
				}
			}
			if len(h.Hits) == 0 || marked < len(h.Hits) {
				t.Errorf("%s: %d hits, %d marked fragments", query, len(h.Hits), marked)
			}
		}
		if plain := search(`{"query": ` + q + `, "size": 5}`); plain.Hits[0].Fragments != nil {
			t.Errorf("fragments without highlight: %v", plain.Hits[0].Fragments)
		}
	})
	t.Run("no words", func(t *testing.T) {
		// A query with nothing for the stages keeps Bleve's order and
		// says it was not reranked.
		for _, query := range []string{`{"match_all": {}}`, `{"wildcard": "vis*"}`, `{"query": "-visa"}`} {
			res := search(`{"query": ` + query + `, "size": 5}`)
			if res.Reranked || res.Window != 0 || len(res.Stages) != 0 || len(res.Hits) == 0 {
				t.Errorf("%s: reranked %v window %d stages %v, %d hits", query, res.Reranked, res.Window, res.Stages, len(res.Hits))
			}
			for i, h := range res.Hits {
				if h.FirstStageRank != i+1 || h.StageScores != nil {
					t.Errorf("%s: hit %d: %+v", query, i, h)
				}
			}
		}
	})
	t.Run("pages agree without reranking", func(t *testing.T) {
		// Ties everywhere (match_all), and a text query's first stage:
		// pages of three are the one long page cut up, and a text
		// query's ranks are the first-stage ranks of its reranked form.
		for _, query := range []string{`{"match_all": {}}`, q} {
			long := search(`{"query": ` + query + `, "size": 30, "rerank": {"enabled": false}}`)
			var paged []string
			for from := 0; from < 30; from += 3 {
				for _, h := range search(fmt.Sprintf(`{"query": %s, "size": 3, "from": %d, "rerank": {"enabled": false}}`, query, from)).Hits {
					paged = append(paged, h.ID)
				}
			}
			var want []string
			for _, h := range long.Hits {
				want = append(want, h.ID)
			}
			if fmt.Sprint(paged) != fmt.Sprint(want) {
				t.Errorf("%s: pages of 3 %v\n  != one page of 30 %v", query, paged, want)
			}
		}
	})
	t.Run("no hits", func(t *testing.T) {
		// Size 0 asks for a count: Wrap passes it through, and the
		// response says it was not reranked.
		res := search(`{"query": ` + q + `, "size": 0}`)
		if res.Reranked || res.Window != 0 || len(res.Stages) != 0 || len(res.Hits) != 0 || res.TotalHits == 0 {
			t.Errorf("reranked %v window %d stages %v, %d hits of %d", res.Reranked, res.Window, res.Stages, len(res.Hits), res.TotalHits)
		}
	})
	t.Run("window", func(t *testing.T) {
		// With a window of 3 only the top 3 are reordered; the rest keep
		// first-stage order and have no stage scores.
		w := search(`{"query": ` + q + `, "size": 8, "rerank": {"window": 3}}`)
		if w.Window != 3 {
			t.Errorf("window %d", w.Window)
		}
		for i, h := range w.Hits {
			if i < 3 && (h.StageScores == nil || h.FirstStageRank > 3) || i >= 3 && (h.StageScores != nil || h.FirstStageRank != i+1) {
				t.Errorf("hit %d: first-stage rank %d, stage scores %v", i, h.FirstStageRank, h.StageScores)
			}
		}
	})
	t.Run("explain", func(t *testing.T) {
		e := search(`{"query": ` + q + `, "size": 2, "explain": true}`)
		for _, h := range e.Hits {
			// First stage, the two stages, and the linear fusion's terms,
			// which sum to the score (within the tie-breaking nudge).
			if h.Explanation == nil || len(h.Explanation.Children) != 4 || !near(h.Explanation.Value, h.Score) ||
				!strings.Contains(h.Explanation.Children[1].Message, "tfidf") {
				t.Fatalf("%s: explanation %+v", h.ID, h.Explanation)
			}
			if f := h.Explanation.Children[3]; !strings.HasPrefix(f.Message, "linear fusion") || !near(f.Value, h.Score) {
				t.Errorf("%s: fusion explanation %+v, score %g", h.ID, f, h.Score)
			}
		}
	})
	t.Run("query objects", func(t *testing.T) {
		for _, qo := range []string{
			`{"match": "visa renewal", "field": "title"}`,
			`{"query": "+visa renew"}`,
			`{"conjuncts": [{"match": "visa", "field": "_all"}, {"match": "qatar", "field": "_all"}]}`,
		} {
			res := search(`{"query": ` + qo + `, "size": 5, "fields": ["*"]}`)
			if len(res.Hits) == 0 {
				t.Errorf("%s: no hits", qo)
				continue
			}
			for _, h := range res.Hits {
				title, _ := h.Fields["title"].(string)
				text, _ := h.Fields["text"].(string)
				if !strings.Contains(strings.ToLower(title+text), "visa") || h.StageScores["tfidf"] <= 0 {
					t.Errorf("%s: hit %s %q has no 'visa' or tfidf score %v", qo, h.ID, title, h.StageScores)
				}
			}
		}
	})
}

func TestSearchPagesWithTies(t *testing.T) {
	// Every document scores the same, so only tie-breaking orders them.
	var docs []dataset.Doc
	for i := 0; i < 23; i++ {
		docs = append(docs, dataset.Doc{ID: fmt.Sprintf("d%02d", (i*7)%23), Text: "bank money"})
	}
	_, ts, _ := newServer(t, newIndex(t, docs), lexicalPipeline, nil)
	for _, tc := range []struct{ window, page int }{{5, 4}, {5, 3}, {10, 7}, {1, 2}} {
		t.Run(fmt.Sprintf("window %d page %d", tc.window, tc.page), func(t *testing.T) {
			search := func(from, size int) []Hit {
				t.Helper()
				var res SearchResponse
				body := fmt.Sprintf(`{"query": "bank", "from": %d, "size": %d, "rerank": {"window": %d}}`, from, size, tc.window)
				if code := call(t, "POST", ts.URL+"/api/search", body, &res); code != http.StatusOK {
					t.Fatalf("%s: status %d", body, code)
				}
				return res.Hits
			}
			full := search(0, 23)
			var paged []Hit
			for from := 0; from < 23; from += tc.page {
				paged = append(paged, search(from, tc.page)...)
			}
			if len(paged) != len(full) {
				t.Fatalf("%d hits paged, %d in one page", len(paged), len(full))
			}
			for i, h := range paged {
				if f := full[i]; h.ID != f.ID || h.FirstStageRank != f.FirstStageRank {
					t.Errorf("hit %d: paged %s (first-stage rank %d), one page %s (%d)", i, h.ID, h.FirstStageRank, f.ID, f.FirstStageRank)
				}
			}
		})
	}
}

// TestSearchTieAtWindowEdge: when first-stage hits tie across the rerank
// window's edge, the window holds the tied documents index.TopN chooses (by
// id), as a library user's rerank does, whatever order they were indexed
// in; and the first stage, searched twice to break the tie, is one sample
// in the metrics.
func TestSearchTieAtWindowEdge(t *testing.T) {
	docs := []dataset.Doc{{ID: "a1", Text: "bank bank bank money"}, {ID: "a2", Text: "bank bank money"}}
	for i := 9; i >= 0; i-- { // indexed against id order
		docs = append(docs, dataset.Doc{ID: fmt.Sprintf("t%d", i), Text: "bank loan"})
	}
	idx := newIndex(t, docs)
	const yaml = "window: 4\nstages:\n  - type: tfidf\n  - type: overlap\nfusion:\n  weights: {first_rank: 1, tfidf: 2, overlap: 0.5}\n"
	_, ts, path := newServer(t, idx, yaml, nil)
	p, _, err := rerank.LoadPipeline(path, rerank.EnvFor(idx))
	if err != nil {
		t.Fatal(err)
	}
	want := libraryRerank(t, idx, p, "bank")
	for _, tc := range []struct{ from, size int }{{0, 4}, {0, 6}, {2, 2}} {
		var res SearchResponse
		body := fmt.Sprintf(`{"query": "bank", "from": %d, "size": %d, "rerank": {"compare": true}}`, tc.from, tc.size)
		if code := call(t, "POST", ts.URL+"/api/search", body, &res); code != http.StatusOK {
			t.Fatalf("%s: status %d", body, code)
		}
		for i, h := range res.Hits {
			if k := tc.from + i; k < len(want) && (h.ID != want[k].ID || h.FirstStageRank != want[k].Rank) {
				t.Errorf("%s hit %d: %s (first-stage rank %d), library %s (%d)", body, i, h.ID, h.FirstStageRank, want[k].ID, want[k].Rank)
			}
		}
		for i, h := range res.FirstStage {
			// The window: the four tied t documents with the smallest ids.
			if k := tc.from + i; k < p.WindowSize() && h.ID != fmt.Sprintf("t%d", k) {
				t.Errorf("%s first stage %d: %s, want t%d", body, i, h.ID, k)
			}
		}
	}
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if m := readAll(t, resp); !strings.Contains(m, `semrank_stage_duration_seconds_count{stage="first_stage"} 3`) {
		t.Errorf("first-stage samples after 3 searches:\n%s", grepLines(m, "first_stage"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestSearchErrors(t *testing.T) {
	idx, _ := demoIndex(t)
	_, ts, _ := newServer(t, idx, lexicalPipeline, func(c *Config) { c.Limits.MaxBodyBytes = 8 << 10 })
	long := strings.Repeat("visa ", 1000)
	tests := []struct {
		name, method, path, body string
		code                     int
		msg                      string
	}{
		{"malformed JSON", "POST", "/api/search", `{"query": "visa"`, 400, "malformed JSON"},
		{"not an object", "POST", "/api/search", `[1, 2]`, 400, "must be an object"},
		{"syntax error", "POST", "/api/search", `{"query": visa}`, 400, "invalid character"},
		{"empty body", "POST", "/api/search", ``, 400, "body is empty"},
		{"trailing data", "POST", "/api/search", `{"query": "visa"} {}`, 400, "data after"},
		{"unknown field", "POST", "/api/search", `{"query": "visa", "sise": 3}`, 400, `unknown field "sise"`},
		{"wrong type", "POST", "/api/search", `{"query": "visa", "size": "ten"}`, 400, "size must be a number"},
		{"size out of int range", "POST", "/api/search", `{"query": "visa", "size": 1e20}`, 400, "size must be an integer in range, not number 1e20"},
		{"fractional from", "POST", "/api/search", `{"query": "visa", "from": 1.5}`, 400, "from must be an integer in range, not number 1.5"},
		{"no query", "POST", "/api/search", `{"size": 3}`, 400, "query is required"},
		{"number query", "POST", "/api/search", `{"query": 42}`, 400, "string of text or a Bleve query object"},
		{"blank query", "POST", "/api/search", `{"query": "  "}`, 400, "query is empty"},
		{"stop words only", "POST", "/api/search", `{"query": "the and of"}`, 400, "no searchable terms"},
		{"query too long", "POST", "/api/search", `{"query": "` + long + `"}`, 400, "the limit is 4096"},
		{"size too big", "POST", "/api/search", `{"query": "visa", "size": 101}`, 400, "size 101 is out of range"},
		{"negative from", "POST", "/api/search", `{"query": "visa", "from": -1}`, 400, "from -1 is out of range"},
		{"window too big", "POST", "/api/search", `{"query": "visa", "rerank": {"window": 5000}}`, 400, "rerank.window 5000"},
		{"unknown rerank option", "POST", "/api/search", `{"query": "visa", "rerank": {"model": "/etc/passwd"}}`, 400, `unknown field "model"`},
		{"empty field name", "POST", "/api/search", `{"query": "visa", "fields": [""]}`, 400, "not a field name"},
		{"number field name", "POST", "/api/search", `{"query": "visa", "fields": ["title", 7]}`, 400, "each element of fields must be a string, not number"},
		{"unknown query type", "POST", "/api/search", `{"query": {"bogus": 1}}`, 400, "not a Bleve query"},
		{"invalid query", "POST", "/api/search", `{"query": {"disjuncts": [{"match": "visa"}], "min": 3}}`, 400, "query is not valid"},
		{"bad regexp", "POST", "/api/search", `{"query": {"regexp": "[a-"}}`, 400, "query cannot be run: error parsing regexp"},
		// Bleve's geo shape parser panics on these: a 400, not a dropped connection.
		{"point of one coordinate", "POST", "/api/search", `{"query": {"geometry": {"shape": {"type": "point", "coordinates": [0]}, "relation": "intersects"}, "field": "title"}}`, 400, "query is not a Bleve query object"},
		{"empty envelope", "POST", "/api/search", `{"query": {"geometry": {"shape": {"type": "envelope", "coordinates": []}, "relation": "intersects"}, "field": "title"}}`, 400, "query is not a Bleve query object"},
		{"oversize body", "POST", "/api/search", `{"query": "visa", "fields": ["` + strings.Repeat("x", 9000) + `"]}`, 413, "larger than the limit of 8192 bytes"},
		{"wrong method", "GET", "/api/search", ``, 405, "use POST"},
		{"unknown endpoint", "GET", "/api/nothing", ``, 404, "no endpoint GET /api/nothing"},
		{"unknown document", "GET", "/api/doc/Q999_R99", ``, 404, `no document with id "Q999_R99"`},
		{"id with space", "GET", "/api/doc/a%20b", ``, 400, "white space"},
		{"doc wrong method", "DELETE", "/api/doc/Q268_R4", ``, 405, "use GET"},
		{"reload with a path", "POST", "/api/admin/reload", `{"path": "/tmp/other.yaml"}`, 400, "takes no parameters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, raw, err := do(tc.method, ts.URL+tc.path, tc.body, "")
			if err != nil {
				t.Fatal(err)
			}
			var e ErrorBody
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatalf("answer is not a JSON error: %s", raw)
			}
			if code != tc.code || e.Status != code || !strings.Contains(e.Error, tc.msg) {
				t.Errorf("got %d %s, want %d with %q", code, raw, tc.code, tc.msg)
			}
		})
	}
}

// TestContentType: a body declared as something other than JSON (an HTML
// form, plain text) is refused with 415 before it is read; JSON, or no
// declaration, is read.
func TestContentType(t *testing.T) {
	idx, _ := demoIndex(t)
	_, ts, _ := newServer(t, idx, lexicalPipeline, nil)
	for _, tc := range []struct {
		path, ctype, body string
		code              int
		msg               string
	}{
		{"/api/search", "application/json", `{"query": "visa"}`, 200, ""},
		{"/api/search", "application/json; charset=utf-8", `{"query": "visa"}`, 200, ""},
		{"/api/search", "", `{"query": "visa"}`, 200, ""},
		{"/api/search", "text/plain", `{"query": "visa"}`, 415, `Content-Type "text/plain" is not JSON`},
		{"/api/search", "application/x-www-form-urlencoded", `{"query": "visa"}`, 415, "send the body as application/json"},
		{"/api/search", "multipart/form-data; boundary=x", `{"query": "visa"}`, 415, "is not JSON"},
		{"/api/search", "bogus;;", `{"query": "visa"}`, 415, "is not JSON"},
		{"/api/index", "text/plain", `{"delete": ["x"]}`, 415, "is not JSON"},
		{"/api/admin/reload", "text/plain", `{}`, 415, "is not JSON"},
		{"/api/admin/reload", "application/x-www-form-urlencoded", ``, 415, "is not JSON"}, // a write: even an empty body must be declared JSON
	} {
		req, err := http.NewRequest("POST", ts.URL+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw := readAll(t, resp)
		var e ErrorBody
		if resp.StatusCode != tc.code || tc.code != 200 && (json.Unmarshal([]byte(raw), &e) != nil || e.Status != tc.code || !strings.Contains(e.Error, tc.msg)) {
			t.Errorf("%s as %q: got %d %s, want %d with %q", tc.path, tc.ctype, resp.StatusCode, raw, tc.code, tc.msg)
		}
	}
}

// lockedBuffer is a log destination that handlers write and a test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestSearchFailureStatus checks that a query Bleve refuses when it runs it
// is the client's error (400) while a first stage that fails for the
// server's reasons, here a closed index, is a logged 500.
func TestSearchFailureStatus(t *testing.T) {
	_, ds := demoIndex(t)
	for _, tc := range []struct {
		name, body string
		closed     bool
		code       int
		msg        string
	}{
		{"bad regexp", `{"query": {"regexp": "[a-"}}`, false, 400, "query cannot be run: error parsing regexp"},
		{"fuzziness too high", `{"query": {"match": "visa", "fuzziness": 9}}`, false, 400, "query cannot be run: fuzziness exceeds max"},
		{"text, closed index", `{"query": "visa"}`, true, 500, "index is closed"},
		{"query object, closed index", `{"query": {"match": "visa", "field": "title"}}`, true, 500, "index is closed"},
		{"bad regexp, closed index", `{"query": {"regexp": "[a-"}}`, true, 500, "index is closed"},
		{"rerank off, closed index", `{"query": "visa", "rerank": {"enabled": false}}`, true, 500, "index is closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// An index of its own, closed here rather than by newIndex's
			// cleanup: a second close panics.
			idx, err := buildIndex(filepath.Join(t.TempDir(), "idx"), ds.Corpus[:30])
			if err != nil {
				t.Fatal(err)
			}
			var logs lockedBuffer
			_, ts, _ := newServer(t, idx, lexicalPipeline, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
			if tc.closed {
				if err := idx.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				t.Cleanup(func() { idx.Close() })
			}
			var e ErrorBody
			code := call(t, "POST", ts.URL+"/api/search", tc.body, &e)
			if code != tc.code || e.Status != code || !strings.Contains(e.Error, tc.msg) {
				t.Errorf("got %d %+v, want %d with %q", code, e, tc.code, tc.msg)
			}
			if logged := strings.Contains(logs.String(), "request failed"); logged != (code >= 500) {
				t.Errorf("status %d, logged %v: %s", code, logged, logs.String())
			}
		})
	}
}

// FuzzSearch sends arbitrary bodies to /api/search: every answer is 200 or
// a 4xx with a JSON error, never a 5xx or a panic.
func FuzzSearch(f *testing.F) {
	idx, _ := demoIndex(f)
	s, _, _ := newServer(f, idx, lexicalPipeline, nil)
	for _, seed := range []string{
		`{"query": "visa"}`, `{"query": {"match": "bank", "field": "title"}, "size": 3, "explain": true}`,
		`{"query": {"query": "+bank -doha"}, "rerank": {"enabled": false}}`, `{"query": "x", "rerank": {"window": 1, "compare": true}}`,
		`{"query": {"wildcard": "ba*"}}`, `{"query": {"regexp": "[a-"}}`, `{"query": {"disjuncts": []}}`, `{"query": {"min": 1}}`,
		`{"query": "visa", "from": 999, "size": 100}`, `{"query": {"ids": ["Q268_R4"]}}`, `{`, `null`, `{"query": null}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest("POST", "/api/search", strings.NewReader(body))
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != http.StatusOK && (w.Code < 400 || w.Code >= 500) {
			t.Fatalf("%q: status %d: %s", body, w.Code, w.Body)
		}
		if !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			t.Fatalf("%q: answer is %s", body, w.Header().Get("Content-Type"))
		}
	})
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func intp(n int) *int { return &n }

func jsonString(s string) json.RawMessage {
	raw, _ := json.Marshal(s)
	return raw
}
