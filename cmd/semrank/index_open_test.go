package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
)

// TestOpenForIndexRefusesAnIndexMadeMeanwhile: a path that was new when
// "semrank index" looked, but holds another run's index by the time it
// opens, is refused rather than opened: the run's discard, made for a new
// path, would otherwise remove that index when the run fails.
func TestOpenForIndexRefusesAnIndexMadeMeanwhile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idx")
	defer func() { testHookOpenForIndex = nil }()
	testHookOpenForIndex = func() {
		other, err := index.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Add(context.Background(), []eval.Doc{{ID: "d1", Text: "bank"}}, nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := other.Close(); err != nil {
			t.Fatal(err)
		}
	}
	idx, discard, err := openForIndex(path)
	if err == nil {
		idx.Close()
		discard() // as a failed run would
		t.Error("openForIndex opened an index made after it looked at the path")
	}
	testHookOpenForIndex = nil
	other, err := index.Open(path)
	if err != nil {
		t.Fatalf("the other run's index: %v", err)
	}
	defer other.Close()
	if n, err := other.DocCount(); err != nil || n != 1 {
		t.Errorf("the other run's index holds %d documents (%v), want 1", n, err)
	}
}

// TestIndexCorpusAlone: indexing reads corpus.jsonl only, so a folder
// holding just a corpus is indexed; a --data naming the corpus file or an
// index is explained rather than reported as a missing file inside it.
func TestIndexCorpusAlone(t *testing.T) {
	dir := t.TempDir()
	data := writeDataDir(t, filepath.Join(dir, "data"), map[string]string{
		"corpus.jsonl": `{"_id":"d1","title":"Bank fees","text":""}` + "\n" + `{"_id":"d2","text":"visa renewal office"}` + "\n",
	})
	idx := filepath.Join(dir, "idx")
	if out, err := execute("index", "--data", data, "--index", idx); err != nil || !strings.Contains(out, "indexed 2 documents") {
		t.Fatalf("index of a corpus-only folder: %v\n%s", err, out)
	}
	for _, tt := range []struct{ data, want string }{
		{filepath.Join(data, "corpus.jsonl"), "is a file: give the folder that holds corpus.jsonl"},
		{idx, "is a semrank index, not a BEIR directory"},
	} {
		_, err := execute("index", "--data", tt.data, "--index", filepath.Join(dir, "other"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("index --data %s: err = %v, want %q", tt.data, err, tt.want)
		}
		_, err = execute("run", "--data", tt.data, "--index", idx, "--out", filepath.Join(dir, "run.trec"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run --data %s: err = %v, want %q", tt.data, err, tt.want)
		}
	}
}

// TestIndexNotesEmptyDocuments: a corpus line whose text is under a key
// semrank does not read ("body") indexes a document no search finds; the
// CLI says so (the API refuses such a document outright).
func TestIndexNotesEmptyDocuments(t *testing.T) {
	dir := t.TempDir()
	data := writeDataDir(t, filepath.Join(dir, "data"), map[string]string{
		"corpus.jsonl": `{"_id":"d1","text":"bank fees"}` + "\n" + `{"_id":"d2","body":"visa renewal office"}` + "\n",
	})
	out, err := execute("index", "--data", data, "--index", filepath.Join(dir, "idx"))
	if err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	if want := `note: 1 of 2 documents in ` + filepath.Join(data, "corpus.jsonl") + ` have neither "title" nor "text", so no search finds them (first: "d2")`; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}
