package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
	_ "github.com/semrank/semrank/rerank/stages"
	"github.com/semrank/semrank/server"
	"github.com/semrank/semrank/testdata"
)

// TestDemo builds the demo from the data built into the binary (package
// testdata), as semrank demo does without --data.
func TestDemo(t *testing.T) {
	ctx := context.Background()
	d, err := Build(ctx, Options{Data: testdata.DemoDir, FS: testdata.Demo, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if len(d.Test) != 10 || len(d.Train) != 40 {
		t.Errorf("%d held out, %d to train on; want 10 and 40", len(d.Test), len(d.Train))
	}
	for _, id := range d.Test {
		for _, tr := range d.Train {
			if id == tr {
				t.Errorf("query %s is both held out and trained on", id)
			}
		}
	}
	// The pipeline file stands on its own: a server loads it by path.
	p, cfg, err := rerank.LoadPipeline(d.PipelinePath, rerank.EnvFor(d.Index))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Fusion.Method != "linear" || cfg.Fusion.Model == "" || p.WindowSize() != Window || !slices.Contains(p.StageNames(), "tfidf") {
		t.Errorf("pipeline: fusion %+v window %d stages %v", cfg.Fusion, p.WindowSize(), p.StageNames())
	}
	// The fusion is learned on retrieved lists, as the server searches:
	// it weighs no feature of the given lists the server lacks.
	if w := p.GivenListWeights(); len(w) > 0 {
		t.Errorf("the demo fusion weighs given-list features: %v", w)
	}
	if slices.Contains(rerank.StageTypes(), "tweak") && !slices.Contains(p.StageNames(), "tweak") {
		t.Error("the tweak stage is registered but the demo did not train it")
	}
	// The data's 500 documents hold 438 different questions; each is
	// indexed once, so none shows twice in a search.
	if n, _ := d.Index.DocCount(); n != 438 || len(d.Dataset.Corpus) != 438 {
		t.Errorf("%d documents indexed, %d in the dataset; want 438 (500 less 62 repeated)", n, len(d.Dataset.Corpus))
	}

	c, err := d.Compare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Queries != 10 || len(c.FirstRun.QueryIDs()) != 10 || len(c.RerankedRun.QueryIDs()) != 10 {
		t.Fatalf("compared %d queries", c.Queries)
	}
	for _, qid := range d.Test {
		f, r := c.FirstRun.Ranking(qid), c.RerankedRun.Ranking(qid)
		if len(f) != len(r) || len(f) == 0 {
			t.Errorf("%s: %d first-stage vs %d reranked", qid, len(f), len(r))
		}
	}
	// The learned pipeline should not be worse than BM25 on held-out
	// questions; on this data it is better (semrank demo --no-serve).
	if fm, rm := c.First.Value("map@10"), c.Reranked.Value("map@10"); rm < fm {
		t.Errorf("held-out MAP: reranked %.4f < first stage %.4f", rm, fm)
	}
	var buf bytes.Buffer
	d.Print(&buf, c, 2, 5)
	out := buf.String()
	for _, want := range []string{"first stage (Bleve BM25)", "map@10", d.Test[0] + ":", "✓"} {
		if !strings.Contains(out, want) {
			t.Errorf("printout lacks %q:\n%s", want, out)
		}
	}
	if ex := d.Examples(4); len(ex) != 4 || ex[0] == "" {
		t.Errorf("examples %q", ex)
	}
}

// TestServeDemo serves the demo and indexes a document through the API:
// the pipeline's payload encoders (TWEAK's, when trained) run on it.
func TestServeDemo(t *testing.T) {
	d, err := Build(context.Background(), Options{Data: "../../testdata/demo", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := server.New(server.Config{Index: d.Index, PipelinePath: d.PipelinePath, Examples: d.Examples(2),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json") // the write endpoints require it
		s.ServeHTTP(w, r)
		return w
	}
	w := post("/api/index", `{"add": [{"_id": "demo-new", "title": "Opening a bank account", "text": "Which bank in Doha opens an account for expats fastest?"}]}`)
	if w.Code != 200 {
		t.Fatalf("index: %d %s", w.Code, w.Body)
	}
	if slices.Contains(d.Stages, tweak.Method) {
		if b, ok, err := d.Index.Payload(tweak.PayloadName, "demo-new"); err != nil || !ok || len(b) == 0 {
			t.Errorf("no TWEAK payload for the document indexed through the API: %v %v", ok, err)
		}
	}
	w = post("/api/search", `{"query": "bank account for expats", "size": 5}`)
	var res server.SearchResponse
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || w.Code != 200 || len(res.Hits) == 0 || !slices.Equal(res.Stages, d.Stages) {
		t.Fatalf("search: %d %s", w.Code, w.Body)
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := Build(context.Background(), Options{Data: t.TempDir(), Dir: t.TempDir()}); err == nil {
		t.Error("built a demo from an empty directory")
	}
}

// TestBuildRefusesEarlierOutputs builds the demo into a directory holding
// each of its outputs in turn: it fails before writing anything, so the
// files there are as they were.
func TestBuildRefusesEarlierOutputs(t *testing.T) {
	for _, name := range outputs {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Build(context.Background(), Options{Data: "../../testdata/demo", Dir: dir})
			if err == nil || !strings.Contains(err.Error(), "already holds "+name) {
				t.Fatalf("err = %v, want one saying %s holds %s", err, dir, name)
			}
			var files []string
			filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					files = append(files, path)
				}
				return err
			})
			if b, _ := os.ReadFile(p); len(files) != 1 || string(b) != "mine\n" {
				t.Errorf("files after the refused build: %v (%s: %q)", files, name, b)
			}
		})
	}
}
