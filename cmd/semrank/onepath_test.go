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

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/server"
)

// TestOnePipelineEverywhere: one pipeline file ranks the demo's real
// SemEval queries alike, ids and scores, through semrank run, semrank
// search --json and a running semrank serve (POST /api/search), which are
// the offline runs, the CLI and the server built on rerank.Wrap.
func TestOnePipelineEverywhere(t *testing.T) {
	lexical := "stages:\n  - type: tfidf\n  - type: bm25\n  - type: overlap\n  - type: length\n"
	for _, tc := range []struct{ name, doc string }{
		{"lexical", "window: 30\n" + lexical},
		// First-stage feedback searches twice: every path must.
		{"first-stage feedback", "window: 30\nfirst_stage: {feedback: {docs: 5, terms: 20}}\n" + lexical},
	} {
		t.Run(tc.name, func(t *testing.T) { onePipelineEverywhere(t, tc.doc) })
	}
}

// onePipelineEverywhere is TestOnePipelineEverywhere for the pipeline
// document doc.
func onePipelineEverywhere(t *testing.T, doc string) {
	idx, pipeline := demoIndex(t, doc)
	dir := t.TempDir()
	ds, err := dataset.Load("../../testdata/demo")
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
	if err := dataset.WriteJSONL(f, queries); err != nil {
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

// TestRunPlainIndex: semrank run over a Bleve index semrank did not build,
// without a pipeline, ranks each query as the application's own search
// would (a match query on the mapping's default field), and with a
// pipeline naming its fields reranks that list.
func TestRunPlainIndex(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plain")
	ds, plain := demoPlainIndex(t, path)
	// The application's own search, for the first queries: its scores,
	// rounded to float32 as semrank's first stage rounds them (tied hits
	// it then orders by id, Bleve by its internal numbers).
	want := map[string][]float32{}
	for _, q := range ds.Queries[:5] {
		res, err := plain.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery(q.FullText()), 5, 0, false))
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			want[q.ID] = append(want[q.ID], float32(h.Score))
		}
	}
	plain.Close()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(data, "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := dataset.WriteJSONL(f, ds.Queries[:5]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Symlink(filepath.Join(mustAbs(t, "../../testdata/demo"), "corpus.jsonl"), filepath.Join(data, "corpus.jsonl")); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, "first.trec")
	if out, err := execute("run", "--data", data, "--index", path, "--out", first); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	got := readRun(t, first)
	for qid, scores := range want {
		if len(got[qid]) < len(scores) {
			t.Fatalf("query %s: run ranks %d documents, Bleve's match query %d", qid, len(got[qid]), len(scores))
		}
		for i, sc := range scores {
			// The run's scores are made distinct: rank·1e-9 below.
			if run := float32(got[qid][i].Score + float64(i+1)*1e-9); run != sc {
				t.Errorf("query %s, hit %d: run scores %v, Bleve's match query %v", qid, i+1, run, sc)
			}
		}
	}
	pipeline := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(pipeline, []byte("window: 20\nfields: {title: subject, text: body}\nstages: [{type: tfidf}, {type: bm25}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reranked := filepath.Join(dir, "reranked.trec")
	if out, err := execute("run", "--data", data, "--index", path, "--pipeline", pipeline, "--out", reranked); err != nil {
		t.Fatalf("run --pipeline: %v\n%s", err, out)
	}
	if len(readRun(t, reranked)) != len(want) {
		t.Errorf("reranked run covers %d queries, want %d", len(readRun(t, reranked)), len(want))
	}
}

// demoPlainIndex indexes the demo's documents at path as a Bleve
// application would (bleve.NewIndexMapping(), fields subject and body) and
// returns the demo's dataset and the open index.
func demoPlainIndex(t *testing.T, path string) (*dataset.Dataset, bleve.Index) {
	t.Helper()
	ds, err := dataset.Load("../../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := bleve.New(path, bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	b := plain.NewBatch()
	for _, d := range ds.Corpus {
		if err := b.Index(d.ID, map[string]any{"subject": d.Title, "body": d.Text}); err != nil {
			t.Fatal(err)
		}
	}
	if err := plain.Batch(b); err != nil {
		t.Fatal(err)
	}
	return ds, plain
}
