package rerank

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestChecksums(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hexOf := func(content string) string {
		sum := sha256.Sum256([]byte(content))
		return hex.EncodeToString(sum[:])
	}
	write("models/a.model", "model a")
	write("fusion.model", "fusion")
	base := "stages:\n  - type: test_const\n    model: models/a.model\n"
	tests := []struct {
		name     string
		doc      string
		setup    func()   // changes files after the digests were taken
		parseErr string   // substring of ParseConfig's error
		buildErr []string // substrings of Build's error
	}{
		{name: "no checksums", doc: base},
		{name: "matching", doc: base + "sha256:\n  models/a.model: " + hexOf("model a") + "\n  fusion.model: " + hexOf("fusion") + "\n"},
		{name: "upper case digest", doc: base + "sha256:\n  models/a.model: " + strings.ToUpper(hexOf("model a")) + "\n"},
		{name: "model replaced", doc: base + "sha256:\n  models/a.model: " + hexOf("model a") + "\n", setup: func() { write("models/a.model", "model a, retrained") },
			buildErr: []string{filepath.Join(dir, "models", "a.model"), "not the file the pipeline was written with", "load it again", "remove its line under sha256"}},
		{name: "listed file missing", doc: base + "sha256:\n  models/gone.model: " + hexOf("x") + "\n",
			buildErr: []string{filepath.Join(dir, "models", "gone.model"), "listed under sha256 but cannot be read"}},
		{name: "short digest", doc: base + "sha256:\n  models/a.model: abc123\n", parseErr: `sha256 of models/a.model: "abc123" is not a SHA-256 digest`},
		{name: "not hex", doc: base + "sha256:\n  models/a.model: " + strings.Repeat("z", 64) + "\n", parseErr: "is not a SHA-256 digest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			write("models/a.model", "model a")
			c, err := ParseConfig([]byte(tt.doc))
			if !errMatches(t, err, tt.parseErr) {
				return
			}
			if tt.setup != nil {
				tt.setup()
			}
			_, err = c.Build(Env{Dir: dir})
			if len(tt.buildErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, w := range tt.buildErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("Build: err = %v, want one containing %q", err, w)
				}
			}
		})
	}
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
	c := &Config{Stages: []StageSpec{{Type: "test_const", Model: "models/a.model"}}}
	if err := c.RecordChecksums(dir, filepath.Join("models", "a.model")); err != nil {
		t.Fatal(err)
	}
	// sha256sum of "hello\n".
	const want = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
	if got := c.Checksums["models/a.model"]; got != want {
		t.Fatalf("checksums %v, want models/a.model: %s", c.Checksums, want)
	}
	path := filepath.Join(dir, "pipeline.yaml")
	if err := WriteConfig(path, c); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadPipeline(path, Env{}); err != nil {
		t.Fatal(err)
	}
	if err := c.RecordChecksums(dir, "models/missing.model"); err == nil || !strings.Contains(err.Error(), "missing.model") {
		t.Errorf("a missing file: err = %v, want one naming it", err)
	}
}
