// Package modeltest holds checks that every model package's tests share.
package modeltest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/models"
)

// Analyzer checks a model package's handling of the analyzer its vocabulary
// came from (see models.Manifest.Analyzer). m is a freshly trained model;
// want is the analyzer identity it must record when saved (analyzers.ID or
// analyzers.WordsID). load and save are the package's own loader and saver.
//
// The same file, edited to record another analyzer, must be refused with
// an error saying why and to retrain; edited to record none (as every model
// saved before analyzers were recorded), it must load, and re-saving the
// model must reproduce it byte for byte, so its ID, which indexes and
// dependent models record, stays the same.
func Analyzer[M any](t *testing.T, m M, want string, load func(path string) (M, error), save func(m M, path string) error) {
	t.Helper()
	dir := t.TempDir()
	saved := filepath.Join(dir, "trained.model")
	if err := save(m, saved); err != nil {
		t.Fatal(err)
	}
	b, err := models.Load(saved, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Manifest.Analyzer; got != want {
		t.Fatalf("%s model records analyzer %q, want %q", b.Manifest.Method, got, want)
	}
	name, _, _ := strings.Cut(want, "/")
	for _, other := range []string{name + "/0", "another_analyzer/1"} {
		b.Manifest.Analyzer = other
		path := filepath.Join(dir, "stale.model")
		if err := b.Save(path); err != nil {
			t.Fatal(err)
		}
		_, err := load(path)
		if !errors.Is(err, models.ErrAnalyzerMismatch) {
			t.Fatalf("model recording analyzer %s: loaded with error %v, want an analyzer mismatch", other, err)
		}
		for _, s := range []string{path, other, want, "retrain"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not mention %q", err, s)
			}
		}
	}
	b.Manifest.Analyzer = ""
	legacy, resaved := filepath.Join(dir, "legacy.model"), filepath.Join(dir, "resaved.model")
	if err := b.Save(legacy); err != nil {
		t.Fatal(err)
	}
	old, err := load(legacy)
	if err != nil {
		t.Fatalf("model recording no analyzer refused: %v", err)
	}
	if err := save(old, resaved); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(legacy)
	if err != nil {
		t.Fatal(err)
	}
	c, err := os.ReadFile(resaved)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, c) {
		t.Error("re-saving a model that recorded no analyzer changed the file (and its ID)")
	}
}
