package server

import (
	"net/http"
	"slices"
	"testing"
)

// TestExamplesOneLine: the examples the page offers are served on one
// line, a line break becoming a space, since the page's search box (an
// <input>) drops line breaks and would join the words around them (the
// demo's examples are a question's title and body, "…december\nHi all…").
func TestExamplesOneLine(t *testing.T) {
	idx, _ := demoIndex(t)
	examples := []string{"Christmas in december\nHi all, where", " tabs\tand\r\n\nspaces  ", "plain"}
	_, ts, _ := newServer(t, idx, lexicalPipeline, func(c *Config) { c.Examples = examples })
	var h Health
	want := []string{"Christmas in december Hi all, where", "tabs and spaces", "plain"}
	if code := call(t, "GET", ts.URL+"/healthz", nil, &h); code != http.StatusOK || !slices.Equal(h.Examples, want) {
		t.Errorf("healthz: %d, examples %q, want %q", code, h.Examples, want)
	}
	if examples[0] != "Christmas in december\nHi all, where" {
		t.Error("New changed its caller's examples")
	}
}
