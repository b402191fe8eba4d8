package recipe

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/offline"
)

// TestBEIRFeedback: an unsupervised run with first-stage feedback writes
// BM25's run as its baseline, the same as a run without feedback, and a
// pipeline.yaml with the feedback that, served over its index, ranks as
// run.trec does.
func TestBEIRFeedback(t *testing.T) {
	ctx := context.Background()
	data := retrievalData(t)
	plain, fb := filepath.Join(t.TempDir(), "plain"), filepath.Join(t.TempDir(), "fb")
	if err := BEIR(ctx, BEIROptions{Data: data, Out: plain, Unsupervised: true, Stages: []string{"overlap"}}); err != nil {
		t.Fatal(err)
	}
	if err := BEIR(ctx, BEIROptions{Data: data, Out: fb, Unsupervised: true, Stages: []string{"overlap"},
		FirstStage: rerank.FirstStage{Feedback: &rerank.Feedback{Docs: 3}}}); err != nil {
		t.Fatal(err)
	}
	read := func(path string) dataset.Run {
		t.Helper()
		r, err := dataset.ReadRunFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	same := func(a, b dataset.Run) bool {
		for _, q := range a.QueryIDs() {
			if !slices.Equal(a.Ranking(q), b.Ranking(q)) {
				return false
			}
		}
		return slices.Equal(a.QueryIDs(), b.QueryIDs())
	}
	if !same(read(filepath.Join(plain, "baseline.trec")), read(filepath.Join(fb, "baseline.trec"))) {
		t.Error("the baseline with feedback differs from the one without: want BM25 in both")
	}
	if same(read(filepath.Join(plain, "run.trec")), read(filepath.Join(fb, "run.trec"))) {
		t.Error("the run with feedback is the run without: feedback was not applied")
	}
	cfg, err := rerank.ReadConfig(filepath.Join(fb, "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if f := cfg.FirstStage.Feedback; f == nil || f.Docs != 3 {
		t.Fatalf("pipeline.yaml's feedback: %+v, want docs 3", f)
	}
	idx, err := index.Open(filepath.Join(fb, "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	p, _, err := rerank.LoadPipeline(filepath.Join(fb, "pipeline.yaml"), rerank.EnvOf(idx))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	_, served, err := offline.RunDataset(ctx, idx, ds, p, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := read(filepath.Join(fb, "run.trec"))
	for _, q := range run.QueryIDs() {
		a, b := run.Ranking(q), served.Ranking(q)
		if len(a) != len(b) {
			t.Fatalf("query %s: run.trec holds %d documents, the served pipeline ranks %d", q, len(a), len(b))
		}
		for i := range a {
			if a[i].DocID != b[i].DocID {
				t.Fatalf("query %s, rank %d: run.trec %s, served %s", q, i+1, a[i].DocID, b[i].DocID)
			}
		}
	}
}
