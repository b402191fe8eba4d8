package server

import (
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
