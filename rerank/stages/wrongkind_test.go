package stages

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// TestModelOfAnotherKind: a stage given a model file of another method, or
// a file that is no model at all, refuses to build, naming the file, what
// it holds and what the stage wanted.
func TestModelOfAnotherKind(t *testing.T) {
	ds, err := dataset.Load("../../testdata/tweak")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := trainTWEAK(t, ds, 0.1).Save(filepath.Join(dir, "tweak.model")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte("stages:\n  - type: bm25\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"s2net", "lsa", "dse", "deepmatch", "bilinear", "siamese", "quality", "translation", "wmd", "ssg"} {
		spec := rerank.StageSpec{Type: typ, Model: "tweak.model"}
		if typ == "ssg" {
			spec.Options = map[string]any{"topics": "tweak.model"}
		}
		_, err := rerank.NewStage(spec, rerank.Env{Dir: dir})
		t.Logf("%s: %v", typ, err)
		if err == nil || !strings.Contains(err.Error(), "tweak.model") || !strings.Contains(err.Error(), `"tweak"`) {
			t.Errorf("%s stage given a tweak model: err = %v, want one naming the file and its method", typ, err)
		}
	}
	for _, typ := range []string{"tweak", "s2net", "lsa", "dse", "deepmatch", "quality", "translation", "wmd"} {
		spec := rerank.StageSpec{Type: typ, Model: "pipeline.yaml"}
		_, err := rerank.NewStage(spec, rerank.Env{Dir: dir})
		t.Logf("%s: %v", typ, err)
		if err == nil || !strings.Contains(err.Error(), "pipeline.yaml") {
			t.Errorf("%s stage given a pipeline file: err = %v, want one naming the file", typ, err)
		}
	}
}
