package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
)

// TestIndexPublishKeepsAnIndexMadeMeanwhile: a path that was new when
// "semrank index" began, but holds another run's index by the time this
// run's index is whole, keeps the other index; this run's is discarded
// with an error that says so, and no staging folder is left.
func TestIndexPublishKeepsAnIndexMadeMeanwhile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "idx")
	idx, target, err := openForIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.Add(context.Background(), []dataset.Doc{{ID: "mine", Text: "visa"}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := index.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Add(context.Background(), []dataset.Doc{{ID: "d1", Text: "bank"}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if err := target.publish(); err == nil || !strings.Contains(err.Error(), "filled by another process") {
		t.Errorf("publish over another run's index: err = %v", err)
	}
	if left := leftStaging(path); len(left) != 0 {
		t.Errorf("staging folders left: %v", left)
	}
	if n := docCount(t, path); n != 1 {
		t.Errorf("the other run's index holds %d documents, want 1", n)
	}
}

// twoDocCorpus writes a BEIR folder at dir holding a corpus of two
// documents alone.
func twoDocCorpus(t *testing.T, dir string) string {
	t.Helper()
	return writeDataDir(t, dir, map[string]string{
		"corpus.jsonl": `{"_id":"d1","title":"Bank fees","text":""}` + "\n" + `{"_id":"d2","text":"visa renewal office"}` + "\n",
	})
}

// docCount opens the index at path and returns how many documents it holds.
func docCount(t *testing.T, path string) uint64 {
	t.Helper()
	idx, err := index.OpenReadOnly(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer idx.Close()
	n, err := idx.DocCount()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}

// TestIndexStaging: a new index is built beside its path and appears
// there only when whole. An empty folder, or a link to one, is replaced
// where it is; a failed run leaves nothing; a staging folder a killed run
// left is pointed out.
func TestIndexStaging(t *testing.T) {
	dir := t.TempDir()
	data := twoDocCorpus(t, filepath.Join(dir, "data"))
	empty := filepath.Join(dir, "empty")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(empty, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, path, at string }{
		{"new path", filepath.Join(dir, "a", "b", "idx"), filepath.Join(dir, "a", "b", "idx")},
		{"link to an empty folder", link, empty},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if out, err := execute("index", "--data", data, "--index", tt.path); err != nil || !strings.Contains(out, "indexed 2 documents") {
				t.Fatalf("index: %v\n%s", err, out)
			}
			if n := docCount(t, tt.at); n != 2 {
				t.Errorf("%s holds %d documents, want 2", tt.at, n)
			}
			if left := leftStaging(tt.path); len(left) != 0 {
				t.Errorf("staging folders left: %v", left)
			}
		})
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced (%v)", err)
	}

	// A failed run (a pipeline file that does not exist) leaves no index
	// and no staging folder.
	failed := filepath.Join(dir, "failed")
	if _, err := execute("index", "--data", data, "--index", failed, "--pipeline", filepath.Join(dir, "none.yaml")); err == nil {
		t.Fatal("index with a missing pipeline file succeeded")
	}
	if _, err := os.Lstat(failed); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s (%v)", failed, err)
	}
	if left := leftStaging(failed); len(left) != 0 {
		t.Errorf("a failed run left staging folders: %v", left)
	}

	// What a killed run leaves is pointed out, and not taken for the index.
	killed := filepath.Join(dir, ".next"+stagingInfix+"123")
	if err := os.Mkdir(killed, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := execute("index", "--data", data, "--index", filepath.Join(dir, "next"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "note: " + killed + " is a new index that a semrank index run was building"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// TestIndexCorpusAlone: indexing reads corpus.jsonl only, so a folder
// holding just a corpus is indexed; a --data naming the corpus file or an
// index is explained rather than reported as a missing file inside it.
func TestIndexCorpusAlone(t *testing.T) {
	dir := t.TempDir()
	data := twoDocCorpus(t, filepath.Join(dir, "data"))
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

// TestIndexKeepsFolderMode: "semrank index" into an existing empty folder
// keeps its mode; the index used to replace it with a 0700 one.
func TestIndexKeepsFolderMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "idx")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := execute("index", "--data", twoDocCorpus(t, filepath.Join(dir, "data")), "--index", path); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Mode().Perm(); m != 0o755 {
		t.Errorf("index folder mode %o, want 755", m)
	}
}
