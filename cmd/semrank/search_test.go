package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/semrank/semrank/index"
)

// searchFixture indexes a real SemEval slice and writes a pipeline of one
// stage, returning their paths.
func searchFixture(t *testing.T, stage string) (idx, pipeline string) {
	t.Helper()
	dir := t.TempDir()
	idx = filepath.Join(dir, "idx")
	if out, err := execute("index", "--data", "../../testdata/tweak", "--index", idx); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	pipeline = filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(pipeline, []byte("stages:\n  - type: "+stage+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return idx, pipeline
}

// TestSearchQueryString searches a real SemEval slice with Bleve's
// query-string syntax, with and without a rerank pipeline, and checks
// that every hit obeys the query's field and exclusion clauses.
func TestSearchQueryString(t *testing.T) {
	idx, pipeline := searchFixture(t, "tfidf")
	// A hit line ends with the document's title (or text).
	line := regexp.MustCompile(`(?m)^\s*\d+\s+\S+.*$`)
	tests := []struct {
		name    string
		args    []string
		want    func(title string) bool // every hit's line
		minHits int
	}{
		{"field", []string{"--query-string", "title:traffic"}, func(s string) bool { return strings.Contains(strings.ToLower(s), "traffic") }, 3},
		{"field, reranked", []string{"--query-string", "--pipeline", pipeline, "title:traffic"}, func(s string) bool { return strings.Contains(strings.ToLower(s), "traffic") }, 3},
		{"exclusion", []string{"--query-string", "traffic -title:signal"}, func(s string) bool { return !strings.Contains(strings.ToLower(s), "signal") }, 3},
		{"phrase", []string{"--query-string", `title:"red light"`}, func(s string) bool { return strings.Contains(strings.ToLower(s), "red light") }, 2},
		{"phrase keeps word order", []string{"--query-string", `title:"light red"`}, nil, 0},
		{"plain text reads the colon as text", []string{"title:traffic"}, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := execute(append([]string{"search", "--index", idx, "-n", "20"}, tc.args...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			hits := line.FindAllString(out, -1)
			if tc.want == nil {
				if !strings.Contains(out, "no results") {
					t.Errorf("want no results, got\n%s", out)
				}
				return
			}
			if len(hits) < tc.minHits {
				t.Fatalf("%d hits, want at least %d:\n%s", len(hits), tc.minHits, out)
			}
			for _, h := range hits {
				if !tc.want(h) {
					t.Errorf("hit does not obey the query: %s", h)
				}
			}
		})
	}
	if _, err := execute("search", "--index", idx, "--query-string", `title:"red`); err == nil || !strings.Contains(err.Error(), "not a valid Bleve query string") {
		t.Errorf("unterminated quote: err = %v, want a query-string syntax error", err)
	}
}

// TestSearchQueryStringEdges checks a query string that starts with "-"
// (read as a flag unless after "--") and one without words for the
// stages, which is shown in first-stage order.
func TestSearchQueryStringEdges(t *testing.T) {
	idx, pipeline := searchFixture(t, "length")
	if _, err := execute("search", "--index", idx, "--query-string", "-traffic"); err == nil || !strings.Contains(err.Error(), `goes after "--"`) {
		t.Errorf("leading dash: err = %v, want the hint about --", err)
	}
	out, err := execute("search", "--index", idx, "--query-string", "--", "-title:signal traffic")
	if err != nil || strings.Contains(strings.ToLower(out), "signal") || !strings.Contains(strings.ToLower(out), "traffic") {
		t.Errorf("after --: err %v, output\n%s", err, out)
	}
	plain, err := execute("search", "--index", idx, "--query-string", "traf*")
	if err != nil {
		t.Fatal(err)
	}
	reranked, err := execute("search", "--index", idx, "--pipeline", pipeline, "--query-string", "traf*")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(reranked, "no words for the stages") || !strings.HasSuffix(reranked, plain) {
		t.Errorf("a query without words was reranked:\n%s\nwant the note, then the first stage's\n%s", reranked, plain)
	}
}

// TestRunNotesUnusedDepth: with given candidate lists, run scores every
// candidate, so a --depth given with them is not used, and it says so.
func TestRunNotesUnusedDepth(t *testing.T) {
	dir := t.TempDir()
	data := writeDataDir(t, filepath.Join(dir, "data"), map[string]string{
		"corpus.jsonl":    `{"_id":"d1","text":"bank account fees"}` + "\n" + `{"_id":"d2","text":"visa renewal office"}` + "\n",
		"queries.jsonl":   `{"_id":"q1","text":"bank fees"}` + "\n",
		"candidates.trec": "q1 Q0 d2 1 2 given\nq1 Q0 d1 2 1 given\n",
	})
	idx := filepath.Join(dir, "idx")
	if out, err := execute("index", "--data", data, "--index", idx); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	const note = "--depth is not used"
	tests := []struct {
		name     string
		args     []string
		wantNote bool
	}{
		{"depth given", []string{"--depth", "1"}, true},
		{"depth left at its default", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := filepath.Join(dir, "run.trec")
			out, err := execute(append([]string{"run", "--data", data, "--index", idx, "--out", run}, tc.args...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got := strings.Contains(out, note); got != tc.wantNote {
				t.Errorf("output has %q: %v, want %v:\n%s", note, got, tc.wantNote, out)
			}
			b, err := os.ReadFile(run)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(b), "\n"); n != 2 {
				t.Errorf("run has %d lines, want both candidates:\n%s", n, b)
			}
		})
	}
}

// TestRunWritesCandidates: "semrank run --out DIR/candidates.trec" writes
// the candidate lists the trainers ask for (tweak's error says to run it).
// An absent candidates.trec is not an input; once written, it is, and the
// same command is refused rather than overwrite what it reads.
func TestRunWritesCandidates(t *testing.T) {
	dir := t.TempDir()
	data := writeDataDir(t, filepath.Join(dir, "data"), map[string]string{
		"corpus.jsonl":  `{"_id":"d1","text":"bank account fees"}` + "\n" + `{"_id":"d2","text":"visa renewal office"}` + "\n",
		"queries.jsonl": `{"_id":"q1","text":"bank fees"}` + "\n",
	})
	idx := filepath.Join(dir, "idx")
	if out, err := execute("index", "--data", data, "--index", idx); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	cands := filepath.Join(data, "candidates.trec")
	if out, err := execute("run", "--data", data, "--index", idx, "--out", cands); err != nil {
		t.Fatalf("run --out DIR/candidates.trec: %v\n%s", err, out)
	}
	b, err := os.ReadFile(cands)
	if err != nil || !strings.HasPrefix(string(b), "q1 Q0 d1 1 ") {
		t.Fatalf("candidates.trec: %q (%v)", b, err)
	}
	if _, err := execute("run", "--data", data, "--index", idx, "--out", cands); err == nil || !strings.Contains(err.Error(), "would overwrite") {
		t.Errorf("run over an existing DIR/candidates.trec: err = %v, want a refusal", err)
	}
}

// TestReadersShareAnIndex: the commands that only read an index open it
// read-only, so they run while another reader holds it (two searches, a
// run beside a rerank) and leave its files as they were.
func TestReadersShareAnIndex(t *testing.T) {
	idx, pipeline := searchFixture(t, "tfidf")
	held, err := index.OpenReadOnly(idx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"search", "--index", idx, "--pipeline", pipeline, "bank account"},
		{"run", "--data", "../../testdata/tweak", "--index", idx, "--out", filepath.Join(dir, "run.trec")},
		{"rerank", "--data", "../../testdata/tweak", "--index", idx, "--pipeline", pipeline, "--out", filepath.Join(dir, "rerank.trec")},
		{"inspect", idx},
	} {
		if out, err := execute(args...); err != nil {
			t.Errorf("%s while another reader holds the index: %v\n%s", args[0], err, out)
		}
	}
}
