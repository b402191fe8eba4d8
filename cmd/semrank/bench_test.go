package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBench times bare and reranked searches of the demo's queries and
// reports both and their ratio; bad numbers are refused.
func TestBench(t *testing.T) {
	idx, pipeline := demoIndex(t, "window: 20\nstages:\n  - type: tfidf\n")
	out, err := execute("bench", "--index", idx, "--pipeline", pipeline, "--data", "../../testdata/demo", "--rounds", "2", "--queries", "3", "--window", "10")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"bare top-10", "reranked (window 10)", " 6 ", "ratio of medians", "first round alone", "share"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Each stage's times: one window a reranked search, six searches.
	if !regexp.MustCompile(`(?m)^ *tfidf +6 .*\n *fusion +6 `).MatchString(out) {
		t.Errorf("output lacks the stages' times:\n%s", out)
	}
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	if out, err := execute("bench", "--index", idx, "--pipeline", pipeline, "--data", "../../testdata/demo", "--rounds", "1", "--queries", "2", "--cpuprofile", prof); err != nil {
		t.Fatalf("--cpuprofile: %v\n%s", err, out)
	}
	if st, err := os.Stat(prof); err != nil || st.Size() == 0 {
		t.Errorf("--cpuprofile wrote no profile: %v", err)
	}
	if _, err := execute("bench", "--index", idx, "--pipeline", pipeline, "--data", "../../testdata/demo", "--rounds", "0"); err == nil || !strings.Contains(err.Error(), "--rounds 0") {
		t.Errorf("--rounds 0: err %v", err)
	}
}

// demoIndex indexes the demo data with semrank index and writes the
// pipeline doc beside it; it returns both paths.
func demoIndex(t *testing.T, doc string) (idx, pipeline string) {
	t.Helper()
	dir := t.TempDir()
	idx, pipeline = filepath.Join(dir, "idx"), filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(pipeline, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := execute("index", "--data", "../../testdata/demo", "--index", idx); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	return idx, pipeline
}
