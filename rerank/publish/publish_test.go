package publish

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/semrank/semrank/rerank"
)

// zeroStage scores every candidate 0; registered as "publish_test", a
// stage type that accepts any model and reads none.
type zeroStage struct{}

func (zeroStage) Name() string { return "publish_test" }
func (zeroStage) Score(_ context.Context, _ rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	return make([]float64, len(cs)), nil
}

func init() {
	rerank.RegisterStage("publish_test", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		spec.ModelFile(env.Dir)
		return zeroStage{}, nil
	})
}

// TestRecordChecksums checks that the digests recorded are those
// sha256sum prints, under slash-separated names, and that a pipeline
// written with them reads back and builds.
func TestRecordChecksums(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models", "a.model"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &rerank.Config{Stages: []rerank.StageSpec{{Type: "publish_test", Model: "models/a.model"}}}
	if err := RecordChecksums(c, dir, filepath.Join("models", "a.model")); err != nil {
		t.Fatal(err)
	}
	// sha256sum of "hello\n".
	const want = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
	if got := c.Checksums["models/a.model"]; got != want {
		t.Fatalf("checksums %v, want models/a.model: %s", c.Checksums, want)
	}
	path := filepath.Join(dir, "pipeline.yaml")
	if err := rerank.WriteConfig(path, c); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rerank.LoadPipeline(path, rerank.Env{}); err != nil {
		t.Fatal(err)
	}
	if err := RecordChecksums(c, dir, "models/missing.model"); err == nil || !strings.Contains(err.Error(), "missing.model") {
		t.Errorf("a missing file: err = %v, want one naming it", err)
	}
}

// TestUpdateChecksum retrains a listed model in place: the pipeline's
// line for it is updated, its comments kept, and it loads again; a file
// the pipeline does not list leaves the pipeline as it was.
func TestUpdateChecksum(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pipeline.yaml")
	model := filepath.Join(dir, "models", "a.model")
	if err := os.MkdirAll(filepath.Dir(model), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &rerank.Config{Stages: []rerank.StageSpec{{Type: "publish_test", Model: "models/a.model"}}}
	if err := RecordChecksums(c, dir, "models/a.model"); err != nil {
		t.Fatal(err)
	}
	raw, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append([]byte("# my pipeline\n"), raw...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rerank.LoadPipeline(path, rerank.Env{}); !errors.Is(err, rerank.ErrModelChanged) {
		t.Fatalf("a model changed in place: err = %v, want rerank.ErrModelChanged", err)
	}
	// Relative to the working directory, as a CLI flag would give it.
	rel, err := filepath.Rel(mustGetwd(t), model)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{rel, model} {
		if ok, err := UpdateChecksum(path, file); err != nil || !ok {
			t.Fatalf("UpdateChecksum(%s) = %v, %v; want true", file, ok, err)
		}
	}
	if _, _, err := rerank.LoadPipeline(path, rerank.Env{}); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(after), "# my pipeline") {
		t.Errorf("comment lost:\n%s", after)
	}
	other := filepath.Join(dir, "other.model")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := UpdateChecksum(path, other); err != nil || ok {
		t.Errorf("an unlisted file: UpdateChecksum = %v, %v; want false", ok, err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(after) {
		t.Errorf("an unlisted file changed the pipeline:\n%s", again)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// TestUpdateChecksumKeepsLook: a hand-written pipeline keeps its
// two-space indentation and comments, and a digest that YAML read as a
// number (digits alone) is written back as a string.
func TestUpdateChecksumKeepsLook(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "fusion.model")
	if err := os.WriteFile(model, []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pipeline.yaml")
	doc := "# mine\nstages:\n  - type: publish_test\nfusion:\n  method: linear  # learned\n  model: fusion.model\nsha256:\n  fusion.model: " + strings.Repeat("1", 64) + "\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := UpdateChecksum(path, model); err != nil || !ok {
		t.Fatalf("UpdateChecksum = %v, %v", ok, err)
	}
	raw, _ := os.ReadFile(path)
	for _, want := range []string{"# mine", "\n  method: linear", "# learned", "\n  fusion.model: "} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("pipeline lacks %q:\n%s", want, raw)
		}
	}
	if strings.Contains(string(raw), "!!") {
		t.Errorf("pipeline has a tag:\n%s", raw)
	}
	if _, err := rerank.ReadConfig(path); err != nil {
		t.Fatal(err)
	}
}
