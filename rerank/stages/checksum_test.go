package stages

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/publish"
)

func init() {
	// test_clobber overwrites every model in the pipeline's folder, as
	// a publisher replacing them while the pipeline loads would.
	rerank.RegisterStage("test_clobber", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		files, err := filepath.Glob(filepath.Join(env.Dir, "*.model"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if err := os.WriteFile(f, []byte("not a model"), 0o644); err != nil {
				return nil, err
			}
		}
		return &WMD{}, nil
	})
}

// TestStagesParseCheckedBytes: every built-in stage that reads a model
// file parses the bytes Build checked against the pipeline's sha256
// lines (rerank.LoadModel), not the file again, so a model replaced while
// the pipeline loads is not mixed in.
func TestStagesParseCheckedBytes(t *testing.T) {
	dir := t.TempDir()
	wmdFixture(t, dir)
	_, concepts := conceptModels(t, dir)
	ds, err := dataset.Load("../../testdata/tweak")
	if err != nil {
		t.Fatal(err)
	}
	if err := trainTWEAK(t, ds, 0.1).Save(filepath.Join(dir, "tweak.model")); err != nil {
		t.Fatal(err)
	}
	c := &rerank.Config{
		Stages: []rerank.StageSpec{
			{Type: "test_clobber", Name: "clobber"},
			{Type: "wmd", Model: "vec.model"},
			{Type: "ssg", Model: "vec.model", Options: map[string]any{"topics": "topics.model"}},
			{Type: "tweak", Model: "tweak.model"},
		},
		Fusion: rerank.FusionSpec{Method: "none"},
	}
	for typ, p := range concepts {
		c.Stages = append(c.Stages, rerank.StageSpec{Type: typ, Model: p})
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.model"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := publish.RecordChecksums(c, dir, filepath.Base(f)); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.Checksums) != 6 {
		t.Fatalf("listed %v, want the 6 models", c.Checksums)
	}
	p, err := c.Build(rerank.Env{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Stages) != len(c.Stages) {
		t.Errorf("%d stages built, want %d", len(p.Stages), len(c.Stages))
	}
}
