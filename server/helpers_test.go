package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/recipe"
	_ "github.com/semrank/semrank/rerank/stages"
)

// demoDir is the bundled SemEval-2016 subtask B dev data (see its README).
const demoDir = "../testdata/demo"

var (
	demoOnce sync.Once
	demoDS   *dataset.Dataset
	demoIdx  *index.Index
	demoErr  error
	demoTmp  string
)

// demoIndex returns a read-only index of the demo corpus, built once per
// test binary. Tests that write build their own with newIndex.
func demoIndex(t testing.TB) (*index.Index, *dataset.Dataset) {
	t.Helper()
	demoOnce.Do(func() {
		demoDS, demoErr = dataset.Load(demoDir)
		if demoErr != nil {
			return
		}
		demoTmp, demoErr = os.MkdirTemp("", "semrank-server-test-")
		if demoErr != nil {
			return
		}
		demoIdx, demoErr = buildIndex(filepath.Join(demoTmp, "idx"), demoDS.Corpus)
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoIdx, demoDS
}

// buildIndex indexes docs (with term-count payloads) into a new index at
// path, as the recipes do.
func buildIndex(path string, docs []dataset.Doc) (*index.Index, error) {
	return recipe.CorpusIndex(context.Background(), &dataset.Dataset{Corpus: docs}, path)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if demoIdx != nil {
		demoIdx.Close()
	}
	if demoTmp != "" {
		os.RemoveAll(demoTmp)
	}
	os.Exit(code)
}

// newIndex returns a fresh writable index holding docs.
func newIndex(t testing.TB, docs []dataset.Doc) *index.Index {
	t.Helper()
	idx, err := buildIndex(filepath.Join(t.TempDir(), "idx"), docs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	return idx
}

// writePipeline writes a pipeline file into dir and returns its path.
func writePipeline(t testing.TB, dir, yaml string) string {
	t.Helper()
	p := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const lexicalPipeline = `window: 30
stages:
  - type: tfidf
  - type: overlap
fusion:
  weights: {first_rank: 1, tfidf: 2, overlap: 0.5}
`

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newServer starts a server over idx with the pipeline yaml and returns it
// with its test HTTP server.
func newServer(t testing.TB, idx *index.Index, yaml string, mod func(*Config)) (*Server, *httptest.Server, string) {
	t.Helper()
	path := writePipeline(t, t.TempDir(), yaml)
	cfg := Config{Index: idx, PipelinePath: path, Logger: quiet}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts, path
}

// call sends a request and decodes a JSON answer into out (when not nil),
// failing the test on transport errors or a non-JSON body.
func call(t testing.TB, method, url string, body any, out any) int {
	t.Helper()
	code, raw, err := do(method, url, body, "")
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: answer is not JSON (%v): %s", method, url, err, raw)
		}
	}
	return code
}

// do sends body (a string or []byte as is, anything else as JSON); a POST
// is declared JSON, as the write endpoints require.
func do(method, url string, body any, token string) (int, []byte, error) {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = bytes.NewReader([]byte(b))
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode >= 400 && resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		err = errors.New("error answer is not JSON: " + resp.Header.Get("Content-Type") + ": " + string(raw))
	}
	return resp.StatusCode, raw, err
}

// libraryRerank is what a library user gets for text with pipeline p:
// BM25 top-window from the index, reranked by p.
func libraryRerank(t testing.TB, idx *index.Index, p *rerank.Pipeline, text string) []rerank.Scored {
	t.Helper()
	q, err := index.TextQuery(text)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := idx.TopN(context.Background(), q, p.WindowSize())
	if err != nil {
		t.Fatal(err)
	}
	scored, err := p.Rerank(context.Background(), rerank.Query{Text: text}, hits)
	if err != nil {
		t.Fatal(err)
	}
	return scored
}

// splitEverySearch makes index.Search split every search it may for the
// rest of the test: two processors, no least number of postings.
func splitEverySearch(t *testing.T) {
	procs := runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	least := index.MinSplitPostings
	index.MinSplitPostings = 0
	t.Cleanup(func() {
		index.MinSplitPostings = least
		runtime.GOMAXPROCS(procs)
	})
}
