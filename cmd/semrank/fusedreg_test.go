package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// TestRerankFusionRegularize reranks the demo's SemEval dev questions
// (testdata/demo: 50 queries, each with its 10 given candidates) with
// the lexical stages, without and with fusion.regularize. Without it
// the run is testdata/demo-lexical.trec, written before the step
// existed; alpha 0 leaves the fused order as it is (the fused scores
// standardised); the default step reorders some query's candidates and
// no more than them.
func TestRerankFusionRegularize(t *testing.T) {
	dir := t.TempDir()
	const stages = "window: 100\nstages:\n  - type: tfidf\n  - type: bm25\n  - type: length\n"
	run := func(name, fusion string) dataset.Run {
		t.Helper()
		pipeline := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(pipeline, []byte(stages+fusion), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".trec")
		if msg, err := execute("rerank", "--data", "../../testdata/demo", "--pipeline", pipeline, "--out", out); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, msg)
		}
		r, err := dataset.ReadRunFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	docs := func(es []dataset.Entry) []string {
		ids := make([]string, len(es))
		for i, e := range es {
			ids[i] = e.DocID
		}
		return ids
	}
	golden, err := dataset.ReadRunFile("testdata/demo-lexical.trec")
	if err != nil {
		t.Fatal(err)
	}
	plain := run("plain", "")
	if !slices.Equal(plain.QueryIDs(), golden.QueryIDs()) || len(plain.QueryIDs()) != 50 {
		t.Fatalf("queries %v, want the golden run's 50", plain.QueryIDs())
	}
	for _, q := range golden.QueryIDs() {
		got, want := plain.Ranking(q), golden.Ranking(q)
		if !slices.Equal(docs(got), docs(want)) {
			t.Fatalf("query %s: %v, want %v as before the step existed", q, docs(got), docs(want))
		}
		for i := range want {
			if math.Abs(got[i].Score-want[i].Score) > 1e-9*math.Max(1, math.Abs(want[i].Score)) {
				t.Fatalf("query %s, %s: score %v, want %v", q, want[i].DocID, got[i].Score, want[i].Score)
			}
		}
	}

	same := run("alpha0", "fusion:\n  regularize: {alpha: 0}\n")
	smoothed := run("default", "fusion:\n  regularize: {}\n")
	moved := 0
	for _, q := range plain.QueryIDs() {
		if !slices.Equal(docs(same.Ranking(q)), docs(plain.Ranking(q))) {
			t.Errorf("query %s, alpha 0: %v, want the fused order %v", q, docs(same.Ranking(q)), docs(plain.Ranking(q)))
		}
		got, want := docs(smoothed.Ranking(q)), docs(plain.Ranking(q))
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			t.Errorf("query %s: the step ranked %v, want a reordering of %v", q, got, want)
		}
		if !slices.Equal(got, want) {
			moved++
		}
	}
	if moved == 0 {
		t.Error("the step reordered no query's candidates")
	}
}
