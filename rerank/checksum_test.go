package rerank

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
			buildErr: []string{filepath.Join(dir, "models", "a.model"), "not the file the pipeline was written with", "load it again", "put its new sha256", "or remove the line"}},
		{name: "listed file missing", doc: base + "sha256:\n  models/gone.model: " + hexOf("x") + "\n",
			buildErr: []string{filepath.Join(dir, "models", "gone.model"), "listed under sha256 but is gone"}},
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

// TestBuildReportsChecksumsFirst: a listed file that changed is refused
// before any stage is built; and one a factory of its own reads by path,
// changed during the build that also fails (a reader of the old pipeline
// file meeting another pipeline's models), is what the error leads with,
// since loading again is the fix.
func TestBuildReportsChecksumsFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.model")
	old := sha256.Sum256([]byte("old"))
	doc := "stages:\n  - type: %s\n    model: a.model\nfusion:\n  weights: {missing_stage: 1}\nsha256:\n  a.model: " + hex.EncodeToString(old[:]) + "\n"
	built := 0
	setTestStage(t, "test_publish", func(spec StageSpec, env Env) (Stage, error) {
		built++
		// A publisher replaces the model while this factory, which
		// reads its model by path, loads it.
		if err := os.WriteFile(spec.ModelFile(env.Dir), []byte("new"), 0o644); err != nil {
			return nil, err
		}
		return constStage{}, nil
	})
	tests := []struct {
		name, stage, before string
		want                []string
		built               int
	}{
		{"changed before the build", "test_publish", "new", []string{"a.model is not the file the pipeline was written with"}, 0},
		{"changed during the build", "test_publish", "old", []string{"a.model is not the file the pipeline was written with", "building it failed too", "missing_stage"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			built = 0
			if err := os.WriteFile(file, []byte(tc.before), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := ParseConfig([]byte(fmt.Sprintf(doc, tc.stage)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Build(Env{Dir: dir})
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) || !errors.Is(err, ErrModelChanged) {
					t.Errorf("err = %v, want ErrModelChanged and %q", err, w)
				}
			}
			if built != tc.built {
				t.Errorf("stage built %d times, want %d", built, tc.built)
			}
		})
	}
}

// testStages holds what the stage types of these tests do, each set by
// its test: the types are registered once (init), as RegisterStage
// panics on a second registration, so that the tests can run again in
// one process (go test -count 2).
var testStages = struct {
	sync.Mutex
	f map[string]StageFactory
}{f: map[string]StageFactory{}}

func init() {
	for _, typ := range []string{"test_publish", "test_flip", "test_keep_env", "test_clobber"} {
		RegisterStage(typ, func(spec StageSpec, env Env) (Stage, error) {
			testStages.Lock()
			f := testStages.f[typ]
			testStages.Unlock()
			if f == nil {
				return nil, fmt.Errorf("%s: no test sets it", typ)
			}
			return f(spec, env)
		})
	}
}

// setTestStage makes stage type typ build with f until t ends.
func setTestStage(t *testing.T, typ string, f StageFactory) {
	testStages.Lock()
	testStages.f[typ] = f
	testStages.Unlock()
	t.Cleanup(func() {
		testStages.Lock()
		delete(testStages.f, typ)
		testStages.Unlock()
	})
}

// TestLoadModelParsesVerifiedBytes: a model loaded through LoadModel is
// parsed from the content Build checked against the pipeline's digest,
// so a file switched to other content and back while the models load (a
// blue/green flip back and forth, which hashing the files after the loads
// cannot see) is not mixed in; files the pipeline does not list are read
// from disk.
func TestLoadModelParsesVerifiedBytes(t *testing.T) {
	dir := t.TempDir()
	listed, unlisted := filepath.Join(dir, "listed.model"), filepath.Join(dir, "unlisted.model")
	for _, f := range []string{listed, unlisted} {
		if err := os.WriteFile(f, []byte("blue"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(r io.Reader, name string) (string, error) {
		b, err := io.ReadAll(r)
		return string(b), err
	}
	loaded := map[string]string{}
	setTestStage(t, "test_flip", func(spec StageSpec, env Env) (Stage, error) {
		path := spec.ModelFile(env.Dir)
		flip := func(content string) error { return os.WriteFile(path, []byte(content), 0o644) }
		if err := flip("green"); err != nil {
			return nil, err
		}
		got, err := LoadModel(env, path, read)
		if err != nil {
			return nil, err
		}
		loaded[filepath.Base(path)] = got
		return constStage{}, flip("blue")
	})
	blue := sha256.Sum256([]byte("blue"))
	c, err := ParseConfig([]byte("stages:\n  - type: test_flip\n    model: listed.model\n  - type: test_flip\n    name: other\n    model: unlisted.model\nsha256:\n  listed.model: " + hex.EncodeToString(blue[:]) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Build(Env{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"listed.model": "blue", "unlisted.model": "green"}; !maps.Equal(loaded, want) {
		t.Errorf("loaded %v, want %v", loaded, want)
	}
	// Outside Build, LoadModel reads the file.
	if got, err := LoadModel(Env{}, listed, read); err != nil || got != "blue" {
		t.Errorf("LoadModel without Build = %q, %v", got, err)
	}
}

// TestLoadModelMatchesPathsAsFiles: a factory naming a listed file by
// another path than its sha256 line resolves to (an absolute model path
// under a pipeline folder given relative, or an absolute sha256 line)
// still parses the checked bytes.
func TestLoadModelMatchesPathsAsFiles(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	abs := filepath.Join(dir, "listed.model")
	if err := os.WriteFile(abs, []byte("blue"), 0o644); err != nil {
		t.Fatal(err)
	}
	blue := sha256.Sum256([]byte("blue"))
	sum := hex.EncodeToString(blue[:])
	var got string
	setTestStage(t, "test_flip", func(spec StageSpec, env Env) (Stage, error) {
		path := spec.ModelFile(env.Dir)
		if err := os.WriteFile(path, []byte("green"), 0o644); err != nil {
			return nil, err
		}
		defer os.WriteFile(path, []byte("blue"), 0o644)
		var err error
		got, err = LoadModel(env, path, func(r io.Reader, _ string) (string, error) {
			b, err := io.ReadAll(r)
			return string(b), err
		})
		return constStage{}, err
	})
	for _, tc := range []struct{ name, model, listed, dir string }{
		{"absolute model, relative folder", abs, "listed.model", "."},
		{"absolute model, no folder", abs, "listed.model", ""},
		{"relative model, absolute sha256 line", "listed.model", filepath.ToSlash(abs), "."},
		{"./ model", "./listed.model", "listed.model", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = ""
			c, err := ParseConfig([]byte(fmt.Sprintf("stages:\n  - type: test_flip\n    model: %q\nsha256:\n  %q: %s\n", tc.model, tc.listed, sum)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Build(Env{Dir: tc.dir}); err != nil {
				t.Fatal(err)
			}
			if got != "blue" {
				t.Errorf("loaded %q, want the checked content blue", got)
			}
		})
	}
}

// TestBuildReleasesVerifiedContent: a factory may keep its Env past the
// build; the listed files' content must not live as long as it does.
func TestBuildReleasesVerifiedContent(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.model")
	if err := os.WriteFile(file, []byte("blue"), 0o644); err != nil {
		t.Fatal(err)
	}
	var kept Env
	setTestStage(t, "test_keep_env", func(spec StageSpec, env Env) (Stage, error) {
		spec.ModelFile(env.Dir)
		kept = env
		return constStage{}, nil
	})
	blue := sha256.Sum256([]byte("blue"))
	c, err := ParseConfig([]byte("stages:\n  - type: test_keep_env\n    model: a.model\nsha256:\n  a.model: " + hex.EncodeToString(blue[:]) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Build(Env{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if kept.verified == nil {
		t.Fatal("the factory's Env has no verified files")
	}
	kept.verified.mu.Lock()
	n := len(kept.verified.content)
	kept.verified.mu.Unlock()
	if n != 0 {
		t.Errorf("%d files' content kept after Build returned", n)
	}
}

// TestFusionParsesVerifiedBytes: the fusion model, loaded after every
// stage, is parsed from the content Build checked, not read again: a
// stage's load time is when a publisher may replace it.
func TestFusionParsesVerifiedBytes(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "fusion.model")
	if err := (&Linear{Weights: map[string]float64{"test_const": 2, FeatureFirstRank: 1}}).Bundle().Save(model); err != nil {
		t.Fatal(err)
	}
	setTestStage(t, "test_clobber", func(spec StageSpec, env Env) (Stage, error) {
		// Replaced, and put back before the build ends.
		raw, err := os.ReadFile(model)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(model, []byte("not a model"), 0o644); err != nil {
			return nil, err
		}
		t.Cleanup(func() { os.WriteFile(model, raw, 0o644) })
		return constStage{}, nil
	})
	c := &Config{Stages: []StageSpec{{Type: "test_clobber"}}, Fusion: FusionSpec{Model: "fusion.model"}}
	sum, err := FileSHA256(model)
	if err != nil {
		t.Fatal(err)
	}
	c.Checksums = map[string]string{"fusion.model": sum}
	p, err := c.Build(Env{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := p.Fusion.(*Linear); !ok || l.Weights["test_const"] != 2 {
		t.Errorf("fusion %#v, want the saved weights", p.Fusion)
	}
}

// TestStagesOnlySkipsFusionChecksum: a stages-only build does not load
// the fusion model, which may be the file being retrained, so its listed
// checksum is not checked; the stages' still are.
func TestStagesOnlySkipsFusionChecksum(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.model", "a")
	write("fusion.model", "retrained")
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	for _, tc := range []struct {
		name, stageSum string
		wantErr        string
	}{
		{"stage unchanged", sum("a"), ""},
		{"stage changed", sum("b"), "a.model is not the file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "pipeline.yaml")
			write("pipeline.yaml", "stages:\n  - type: test_const\n    model: a.model\nfusion:\n  model: ./fusion.model\nsha256:\n  a.model: "+tc.stageSum+"\n  fusion.model: "+sum("before")+"\n")
			_, _, err := LoadPipeline(path, Env{}, StagesOnly())
			errMatches(t, err, tc.wantErr)
		})
	}
}

// TestChecksumOfRemovedModel: a listed model that is gone (a recipe pruned
// it while a reader held the old pipeline file) is ErrModelChanged, which
// a server answers with "try again".
func TestChecksumOfRemovedModel(t *testing.T) {
	dir := t.TempDir()
	doc := "stages:\n  - type: test_const\nsha256:\n  models/gone.model: " + strings.Repeat("a", 64) + "\n"
	c, err := ParseConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Build(Env{Dir: dir}); !errors.Is(err, ErrModelChanged) || !strings.Contains(err.Error(), "is gone") {
		t.Errorf("err = %v, want ErrModelChanged saying the file is gone", err)
	}
}
