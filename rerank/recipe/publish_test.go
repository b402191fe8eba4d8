package recipe

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/index/convert"
	"github.com/semrank/semrank/rerank"
)

// TestPublishedPipelineListsItsModels checks that a published pipeline
// lists the checksum of every file it publishes, and that a reader of the
// old pipeline file which meets the new models (a server reloading while
// a recipe publishes) fails with an error saying to load again, rather
// than loading a mixed pipeline.
func TestPublishedPipelineListsItsModels(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	stages := []rerank.StageSpec{{Type: "overlap"}, {Type: "memo"}, {Type: "textlen"}}
	path, err := (&Recipe{Stages: stages, Folds: 2, Text: []string{"a"}}).Fit(ctx, synthetic(16), nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rerank.ReadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for p, sum := range cfg.Checksums {
		listed = append(listed, p)
		if got, err := rerank.FileSHA256(filepath.Join(dir, filepath.FromSlash(p))); err != nil || got != sum {
			t.Errorf("%s: sha256 %s (%v), listed %s", p, got, err, sum)
		}
	}
	slices.Sort(listed)
	if want := []string{"fusion.model", "models/memo.txt", "models/textlen.txt"}; !slices.Equal(listed, want) {
		t.Errorf("listed %v, want %v", listed, want)
	}
	oldFile, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	// New judgments and text: every model changes.
	if _, err := (&Recipe{Stages: stages, Folds: 2, Text: []string{"a", "b"}}).Fit(ctx, synthetic(24), nil, dir); err != nil {
		t.Fatal(err)
	}
	newFile, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The old pipeline file over the new models: what a reader sees
	// between the models' renames and the pipeline file's.
	if err := os.WriteFile(path, oldFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rerank.LoadPipeline(path, rerank.Env{}); err == nil || !strings.Contains(err.Error(), "load it again") {
		t.Errorf("the old pipeline over new models: err = %v, want one saying to load again", err)
	}
	if err := os.WriteFile(path, newFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rerank.LoadPipeline(path, rerank.Env{}); err != nil {
		t.Errorf("the new pipeline: %v", err)
	}
}

// TestRerunRemovesUnusedModels reruns a recipe with fewer stages over its
// own output: the models only the old pipeline used are removed, unless
// they are not the recipe's to remove.
func TestRerunRemovesUnusedModels(t *testing.T) {
	const (
		unused   = "models/textlen.txt" // the stage the rerun drops
		userFile = "models/user-notes.txt"
	)
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		kept    bool   // whether unused survives the rerun
		wantLog string // substring of the rerun's log; "" for none
	}{
		{name: "the recipe's own model", wantLog: "no longer uses: " + unused},
		{name: "changed by hand since", kept: true, setup: func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(unused)), []byte("mine now\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "old pipeline without checksums", kept: true, setup: func(t *testing.T, dir string) {
			path := filepath.Join(dir, "pipeline.yaml")
			cfg, err := rerank.ReadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Checksums = nil
			if err := rerank.WriteConfig(path, cfg); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "old pipeline unreadable", kept: true, setup: func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "pipeline.yaml"), []byte("stages: [\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			all := []rerank.StageSpec{{Type: "overlap"}, {Type: "memo"}, {Type: "textlen"}}
			if _, err := (&Recipe{Stages: all, Folds: 2}).Fit(ctx, synthetic(16), nil, dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, userFile), []byte("notes\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			var log strings.Builder
			path, err := (&Recipe{Stages: all[:2], Folds: 2, Log: &log}).Fit(ctx, synthetic(16), nil, dir)
			if err != nil {
				t.Fatal(err)
			}
			exists := func(rel string) bool {
				_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
				return err == nil
			}
			if got := exists(unused); got != tt.kept {
				t.Errorf("%s exists: %v, want %v", unused, got, tt.kept)
			}
			for _, f := range []string{"models/memo.txt", userFile} {
				if !exists(f) {
					t.Errorf("%s was removed", f)
				}
			}
			if tt.wantLog != "" && !strings.Contains(log.String(), tt.wantLog) {
				t.Errorf("log lacks %q:\n%s", tt.wantLog, log.String())
			}
			if tt.wantLog == "" && strings.Contains(log.String(), "no longer uses") {
				t.Errorf("log reports a removal:\n%s", log.String())
			}
			if _, _, err := rerank.LoadPipeline(path, rerank.Env{}); err != nil {
				t.Errorf("the new pipeline: %v", err)
			}
		})
	}
}

// TestInterruptedRerunLeavesNoStaleRuns reruns recipes over their own
// output and interrupts each once it has published its first new
// pipeline, before it writes its run files again: the run files of the
// earlier run, made by the pipeline just replaced, must be gone, not left
// beside the new one.
func TestInterruptedRerunLeavesNoStaleRuns(t *testing.T) {
	cases := map[string]struct {
		cancelOn string   // log line prefix after the first new pipeline
		runs     []string // run files under out
	}{
		"SemEval": {cancelOn: "wrote ", runs: []string{"dev.trec"}},
		"BEIR":    {cancelOn: "fold 1/", runs: []string{"baseline.trec", "run.trec"}},
	}
	for _, ep := range entryPoints(t) {
		c, ok := cases[ep.name]
		if !ok {
			continue
		}
		t.Run(ep.name, func(t *testing.T) {
			out := t.TempDir()
			if err := ep.run(context.Background(), out, nil); err != nil {
				t.Fatal(err)
			}
			for _, f := range c.runs {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil {
					t.Fatalf("the first run wrote no %s: %v", f, err)
				}
			}
			// A BEIR rerun builds its index anew.
			if err := os.RemoveAll(filepath.Join(out, "index")); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			err := ep.run(ctx, out, cancelOn{prefix: c.cancelOn, cancel: cancel})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("rerun: err = %v, want it cancelled", err)
			}
			for _, f := range c.runs {
				if _, err := os.Stat(filepath.Join(out, f)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s of the earlier run is still there (%v)", f, err)
				}
			}
		})
	}
}

// onLine calls f with each line written that starts with prefix.
type onLine struct {
	prefix string
	f      func()
}

func (o onLine) Write(p []byte) (int, error) {
	if strings.HasPrefix(strings.TrimLeft(string(p), "\n"), o.prefix) {
		o.f()
	}
	return len(p), nil
}

// TestSemEvalDevIndexInOut checks where the SemEval recipe's dev report
// keeps its index while it reports: in a staging directory in the output
// folder, which the next run sweeps should this one be killed, not in the
// system's temporary directory, which nothing sweeps.
func TestSemEvalDevIndexInOut(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	out := t.TempDir()
	var seen bool
	look := func() {
		seen = true
		if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
			t.Errorf("the system's temporary directory holds %v during the dev report", entries[0].Name())
		}
		if idx, _ := filepath.Glob(filepath.Join(out, ".fit-*", "dev.idx")); len(idx) != 1 {
			t.Errorf("dev indexes in the output folder's staging: %v, want one", idx)
		}
	}
	train := filepath.Join("..", "..", "testdata", "semeval", "2015-dev-slice.xml")
	dev := filepath.Join("..", "..", "testdata", "semeval", "dev-slice.xml")
	err := SemEval(context.Background(), SemEvalOptions{Subtask: convert.SubtaskA, Train: []string{train}, Dev: dev,
		Out: out, Stages: []string{"lexical"}, TrainOnly: true, Log: onLine{prefix: "dev (", f: look}})
	if err != nil {
		t.Fatal(err)
	}
	if !seen {
		t.Fatal("no dev report")
	}
	if staged, _ := filepath.Glob(filepath.Join(out, ".fit-*")); len(staged) > 0 {
		t.Errorf("staging left behind: %v", staged)
	}
}

// fixedStage is the "fixed" stage: it has no trainer and reads the model
// file its spec names, so a recipe reuses the file rather than retrain it.
type fixedStage struct{ memo }

func (fixedStage) Name() string { return "fixed" }

func init() {
	rerank.RegisterStage("fixed", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		if _, err := os.ReadFile(spec.ModelFile(env.Dir)); err != nil {
			return nil, err
		}
		return fixedStage{}, nil
	})
}

// TestPruneKeepsWhatIsNotTheRecipes checks the files a rerun must not
// remove although the earlier pipeline listed them and the new one does
// not train them: a model the new pipeline reuses, and a listed name
// that leads out of models/.
func TestPruneKeepsWhatIsNotTheRecipes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := (&Recipe{Stages: []rerank.StageSpec{{Type: "overlap"}, {Type: "memo"}}, Folds: 2}).Fit(ctx, synthetic(16), nil, dir); err != nil {
		t.Fatal(err)
	}
	// A hand-edited listing naming a file outside models/.
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pipeline.yaml")
	cfg, err := rerank.ReadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Checksums["models/../notes.txt"], err = rerank.FileSHA256(notes); err != nil {
		t.Fatal(err)
	}
	if err := rerank.WriteConfig(path, cfg); err != nil {
		t.Fatal(err)
	}
	memoModel := filepath.Join(dir, "models", "memo.txt")
	reuse := []rerank.StageSpec{{Type: "overlap"}, {Type: "fixed", Model: memoModel}}
	if _, err := (&Recipe{Stages: reuse, Folds: 2}).Fit(ctx, synthetic(16), nil, dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{memoModel, notes} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s was removed: %v", f, err)
		}
	}
	if _, _, err := rerank.LoadPipeline(path, rerank.Env{}); err != nil {
		t.Errorf("the new pipeline: %v", err)
	}
}
