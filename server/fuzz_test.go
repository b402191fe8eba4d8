package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// FuzzIndexBody sends arbitrary bodies to /api/index: every answer is 200
// or a 4xx with a JSON error, never a 5xx or a panic, and a 200 wrote
// documents whose text is the valid UTF-8 that was sent.
func FuzzIndexBody(f *testing.F) {
	idx := newIndex(f, []dataset.Doc{{ID: "d1", Text: "visa renewal"}, {ID: "d2", Title: "bank", Text: "bank account in Doha"}})
	s, _, _ := newServer(f, idx, lexicalPipeline, func(c *Config) {
		c.Limits.MaxDocBytes = 2000
		c.Limits.MaxIndexBodyBytes = 8000
		c.Limits.MaxIndexDocs = 20
	})
	for _, seed := range []string{
		`{"add": [{"_id": "n1", "title": "Camel racing", "text": "When does the season start?", "metadata": {"source": "test", "n": 1}}]}`,
		`{"delete": ["d1", "never-there"]}`, `{"add": [{"_id": "d2", "text": "replaced"}], "delete": ["d1"]}`,
		`{"add": [{"_id": "s", "text": "bank \ud800 visa"}]}`, `{"add": [{"_id": "p", "text": "\ud83d\ude00 \\ud800"}]}`,
		"{\"add\": [{\"_id\": \"u\", \"text\": \"caf\xe9\"}]}", `{"add": [{"_id": "", "text": "x"}]}`, `{"add": [{"_id": "a b", "text": "x"}]}`,
		`{"add": [{"_id": "x"}]}`, `{"add": {"_id": "x"}}`, `{"delete": [7]}`, `{}`, `{`, `null`, `[]`, `""`, `{"add": null, "delete": null}`,
		`{"add": [{"_id": "m", "text": "x", "metadata": {"a": [1, 2, {"b": null}]}}]}`, `{"add": [{"_id": "d", "text": "x"}, {"_id": "d", "text": "y"}]}`,
		`{"add": [{"_id": "big", "text": "` + strings.Repeat("visa ", 500) + `"}]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		w := fuzzPost(t, s, "/api/index", body)
		if w.Code != http.StatusOK {
			return
		}
		var sent IndexRequest
		if err := json.Unmarshal([]byte(body), &sent); err != nil {
			t.Fatalf("%q: accepted, but encoding/json refuses it: %v", body, err)
		}
		for _, d := range sent.Add {
			got, ok, err := idx.Doc(d.ID)
			if err != nil || !ok || got.Title != d.Title || got.Text != d.Text {
				t.Fatalf("%q: %s stored as %+v (ok %v, %v)", body, d.ID, got, ok, err)
			}
			if strings.ContainsRune(d.Title+d.Text, '\uFFFD') && !strings.Contains(body, "\uFFFD") && !strings.Contains(strings.ToLower(body), `\ufffd`) {
				t.Fatalf("%q: accepted with a replacement character the client did not send", body)
			}
		}
	})
}

// FuzzReloadBody sends arbitrary bodies to /api/admin/reload: an empty
// body, null or an empty object reloads (200), anything else is a 4xx with
// a JSON error, never a 5xx or a panic.
func FuzzReloadBody(f *testing.F) {
	idx, _ := demoIndex(f)
	s, _, _ := newServer(f, idx, lexicalPipeline, nil)
	for _, seed := range []string{"", "{}", "{ }", " {\n} \n", "null", `{"path": "/tmp/other.yaml"}`, "[]", `""`, "{} {}", "{", "\xff", "nul", `{"": 1}`, "0"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		w := fuzzPost(t, s, "/api/admin/reload", body)
		t2 := bytes.TrimSpace([]byte(body))
		want := len(t2) == 0 || string(t2) == "null" || json.Valid(t2) && bytes.HasPrefix(t2, []byte("{")) && isEmptyObject(t2)
		if (w.Code == http.StatusOK) != want {
			t.Fatalf("%q: status %d, want success %v: %s", body, w.Code, want, w.Body)
		}
	})
}

// isEmptyObject reports whether raw, valid JSON, is an object without keys.
func isEmptyObject(raw []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil && len(m) == 0
}

// fuzzPost posts body to path as JSON and fails t unless the answer is a
// 200 or a 4xx, in JSON.
func fuzzPost(t *testing.T, s http.Handler, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	if w.Code != http.StatusOK && (w.Code < 400 || w.Code >= 500) {
		t.Fatalf("%q: status %d: %s", body, w.Code, w.Body)
	}
	if !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") || !json.Valid(w.Body.Bytes()) {
		t.Fatalf("%q: answer is %s: %q", body, w.Header().Get("Content-Type"), w.Body)
	}
	return w
}
