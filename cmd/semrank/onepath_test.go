package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/server"
)

// TestOnePipelineEverywhere: one pipeline file ranks the demo's real
// SemEval queries alike, ids and scores, through semrank run, semrank
// search --json and a running semrank serve (POST /api/search), which are
// the offline runs, the CLI and the server built on rerank.Wrap.
func TestOnePipelineEverywhere(t *testing.T) {
	idx, pipeline := demoIndex(t, "window: 30\nstages:\n  - type: tfidf\n  - type: bm25\n  - type: overlap\n  - type: length\n")
	dir := t.TempDir()
	ds, err := eval.LoadDataset("../../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	// The queries alone: run retrieves, as the others search.
	data := filepath.Join(dir, "data")
	queries := ds.Queries[:8]
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(data, "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := eval.WriteJSONL(f, queries); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Symlink(filepath.Join(mustAbs(t, "../../testdata/demo"), "corpus.jsonl"), filepath.Join(data, "corpus.jsonl")); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run.trec")
	if out, err := execute("run", "--data", data, "--index", idx, "--pipeline", pipeline, "--depth", "30", "--out", run); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	runs := readRun(t, run)
	type hit struct {
		ID    string  `json:"id"`
		Score float64 `json:"score"`
	}
	var fromCLI [][]hit
	for _, q := range queries {
		out, err := execute("search", "--index", idx, "--pipeline", pipeline, "--json", "-n", "10", q.FullText())
		if err != nil {
			t.Fatalf("search --json: %v\n%s", err, out)
		}
		var res struct{ Hits []hit }
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("search --json printed %q: %v", out, err)
		}
		fromCLI = append(fromCLI, res.Hits)
	}
	url := serveCommand(t, "serve", "--index", idx, "--pipeline", pipeline, "--addr", "127.0.0.1:0", "--read-only")
	for i, q := range queries {
		body, _ := json.Marshal(server.SearchRequest{Query: mustJSON(t, q.FullText())})
		resp, err := http.Post(url+"api/search", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		var res struct{ Hits []hit }
		err = json.NewDecoder(resp.Body).Decode(&res)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := runs[q.ID]
		if len(res.Hits) == 0 || len(res.Hits) != len(fromCLI[i]) || len(want) < len(res.Hits) {
			t.Fatalf("query %s: server %d hits, search --json %d, run %d", q.ID, len(res.Hits), len(fromCLI[i]), len(want))
		}
		for j, h := range res.Hits {
			if h != fromCLI[i][j] || h.ID != want[j].ID || h.Score != want[j].Score {
				t.Errorf("query %s, hit %d: server %v, search --json %v, run %v", q.ID, j+1, h, fromCLI[i][j], want[j])
			}
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readRun reads a TREC run file's rankings, ids and scores as written.
func readRun(t *testing.T, path string) map[string][]struct {
	ID    string
	Score float64
} {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]struct {
		ID    string
		Score float64
	}{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 6 {
			t.Fatalf("run line %q", sc.Text())
		}
		s, err := strconv.ParseFloat(fs[4], 64)
		if err != nil {
			t.Fatal(err)
		}
		out[fs[0]] = append(out[fs[0]], struct {
			ID    string
			Score float64
		}{fs[2], s})
	}
	if len(out) == 0 {
		t.Fatalf("%s: no rankings", path)
	}
	return out
}
