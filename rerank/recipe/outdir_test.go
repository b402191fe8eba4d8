package recipe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index/convert"
	"github.com/semrank/semrank/internal/dirlock"
	"github.com/semrank/semrank/rerank"
)

// beirDirs saves BEIR directories for full retrieval: data, judged
// queries from synthetic(12), and extra, unjudged text from synthetic(4).
func beirDirs(t *testing.T) (data, extra string) {
	t.Helper()
	ds := synthetic(12)
	ds.Candidates = nil
	data, extra = filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "extra")
	if err := ds.Save(data); err != nil {
		t.Fatal(err)
	}
	more := synthetic(4)
	more.Qrels, more.Candidates = nil, nil
	if err := more.Save(extra); err != nil {
		t.Fatal(err)
	}
	return data, extra
}

// entryPoint is an exported recipe function run on small data into out.
type entryPoint struct {
	name string
	// sub is the directory under out, if any, where the run also
	// publishes a pipeline, with a lock of its own.
	sub string
	run func(ctx context.Context, out string, log io.Writer) error
}

// entryPoints returns the exported recipe functions that write into an
// output directory.
func entryPoints(t *testing.T) []entryPoint {
	t.Helper()
	train := filepath.Join("..", "..", "testdata", "semeval", "2015-dev-slice.xml")
	dev := filepath.Join("..", "..", "testdata", "semeval", "dev-slice.xml")
	data, _ := beirDirs(t)
	beir := func(unsupervised bool) func(context.Context, string, io.Writer) error {
		return func(ctx context.Context, out string, log io.Writer) error {
			return BEIR(ctx, BEIROptions{Data: data, Out: out, Folds: 2, Unsupervised: unsupervised, Pseudo: termQueries, Stages: []string{"overlap", "memo"}, Log: log})
		}
	}
	return []entryPoint{
		{name: "Fit", run: func(ctx context.Context, out string, log io.Writer) error {
			_, err := (&Recipe{Stages: []rerank.StageSpec{{Type: "overlap"}, {Type: "memo"}}, Folds: 2, Log: log}).Fit(ctx, synthetic(12), nil, out)
			return err
		}},
		{name: "SemEval", sub: "train", run: func(ctx context.Context, out string, log io.Writer) error {
			return SemEval(ctx, SemEvalOptions{Subtask: convert.SubtaskA, Train: []string{train}, Dev: dev, Out: out, Stages: []string{"lexical"}, Log: log})
		}},
		{name: "BEIR", sub: "fold2", run: beir(false)},
		{name: "BEIR unsupervised", run: beir(true)},
	}
}

// TestSecondRunRefused runs each recipe on a directory whose lock is held:
// it fails at once, naming the directory and the holder, and writes
// nothing there. A recipe that also fits in a directory under its output
// directory fails when that one is locked.
func TestSecondRunRefused(t *testing.T) {
	ctx := context.Background()
	for _, ep := range entryPoints(t) {
		subs := []string{""}
		if ep.sub != "" {
			subs = append(subs, ep.sub)
		}
		for _, sub := range subs {
			t.Run(filepath.Join(ep.name, sub), func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out")
				locked := filepath.Join(out, sub)
				l, err := dirlock.Acquire(locked)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Release()
				err = ep.run(ctx, out, nil)
				for _, want := range []string{"another recipe", fmt.Sprintf("process %d", os.Getpid()), "is writing " + locked + ";"} {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("err = %v, want one containing %q", err, want)
					}
				}
				if sub != "" {
					return
				}
				if files := snapshot(t, out); !reflect.DeepEqual(files, map[string]string{dirlock.Name: fmt.Sprintln(os.Getpid())}) {
					t.Errorf("files written into the locked %s: %q", out, files)
				}
			})
		}
	}
}

// TestBadInputWritesNothing checks that a recipe given a path that does
// not exist, or a stage type that does not, fails before it creates its
// output directory.
func TestBadInputWritesNothing(t *testing.T) {
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name string
		run  func(out string) error
	}{
		{"SemEval train", func(out string) error {
			return SemEval(ctx, SemEvalOptions{Subtask: convert.SubtaskA, Train: []string{missing + ".xml"}, Out: out})
		}},
		{"SemEval dev", func(out string) error {
			train := filepath.Join("..", "..", "testdata", "semeval", "2015-dev-slice.xml")
			return SemEval(ctx, SemEvalOptions{Subtask: convert.SubtaskA, Train: []string{train}, Dev: missing + ".xml", Out: out})
		}},
		{"BEIR data", func(out string) error { return BEIR(ctx, BEIROptions{Data: missing, Out: out}) }},
		{"BEIR text", func(out string) error {
			data, _ := beirDirs(t)
			return BEIR(ctx, BEIROptions{Data: data, Text: []string{missing}, Out: out})
		}},
		{"SemEval unknown stage", func(out string) error {
			train := filepath.Join("..", "..", "testdata", "semeval", "2015-dev-slice.xml")
			return SemEval(ctx, SemEvalOptions{Subtask: convert.SubtaskA, Train: []string{train}, Stages: []string{"bogus"}, Out: out})
		}},
		{"BEIR more folds than queries", func(out string) error {
			data, _ := beirDirs(t)
			return BEIR(ctx, BEIROptions{Data: data, Folds: 13, Stages: []string{"lexical"}, Out: out})
		}},
		{"BEIR unknown stage", func(out string) error {
			data, _ := beirDirs(t)
			return BEIR(ctx, BEIROptions{Data: data, Stages: []string{"lexical", "bogus"}, Out: out})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if err := tc.run(out); err == nil {
				t.Fatal("no error")
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("output directory left behind: %v", err)
			}
		})
	}
}

// TestStaleStagingSwept plants the staging directories of a killed run in
// each recipe's output directory (and the directory under it where it
// also fits): a run removes them and says so, and keeps other files.
func TestStaleStagingSwept(t *testing.T) {
	ctx := context.Background()
	for _, ep := range entryPoints(t) {
		t.Run(ep.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			dirs := []string{out}
			if ep.sub != "" {
				dirs = append(dirs, filepath.Join(out, ep.sub))
			}
			var stale []string
			for _, d := range dirs {
				for _, name := range []string{".fit-123", ".fit-456/models"} {
					p := filepath.Join(d, name)
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(p, "half-written"), []byte("x"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				stale = append(stale, filepath.Join(d, ".fit-123"), filepath.Join(d, ".fit-456"))
			}
			// Not staging directories: a file named so and a user's folder.
			keep := []string{filepath.Join(out, ".fit-notes"), filepath.Join(out, "mine", "notes")}
			for _, p := range keep {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("mine"), 0o644); err != nil {
					t.Fatal(err)
				}
			}

			var log strings.Builder
			if err := ep.run(ctx, out, &log); err != nil {
				t.Fatal(err)
			}
			for _, p := range stale {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s not removed: %v", p, err)
				}
			}
			for _, p := range keep {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s removed: %v", p, err)
				}
			}
			for _, d := range dirs {
				if want := fmt.Sprintf("removed from %s what an interrupted run left: .fit-123, .fit-456\n", d); !strings.Contains(log.String(), want) {
					t.Errorf("log lacks %q:\n%s", want, log.String())
				}
			}
		})
	}
}

// TestWriteDir checks that a directory written with writeDir replaces the
// old one only once it is complete.
func TestWriteDir(t *testing.T) {
	failed := errors.New("disk full")
	for _, tc := range []struct {
		name    string
		old     map[string]string // the directory before; nil for none
		fill    map[string]string // files fill writes
		fillErr error             // what fill then returns
		want    map[string]string // the directory after; nil for none
	}{
		{name: "replaces", old: map[string]string{"a": "old", "sub/b": "old"}, fill: map[string]string{"a": "new", "c": "new"},
			want: map[string]string{"a": "new", "c": "new"}},
		{name: "creates", fill: map[string]string{"a": "new"}, want: map[string]string{"a": "new"}},
		{name: "fill fails", old: map[string]string{"a": "old", "sub/b": "old"}, fill: map[string]string{"a": "half"}, fillErr: failed,
			want: map[string]string{"a": "old", "sub/b": "old"}},
		{name: "fill fails, no old", fill: map[string]string{"a": "half"}, fillErr: failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "data")
			write := func(dir string, files map[string]string) {
				for name, content := range files {
					p := filepath.Join(dir, name)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tc.old != nil {
				write(dst, tc.old)
			}
			err := writeDir(dst, func(dir string) error {
				write(dir, tc.fill)
				return tc.fillErr
			})
			if !errors.Is(err, tc.fillErr) {
				t.Fatalf("err = %v, want %v", err, tc.fillErr)
			}
			if tc.want == nil {
				if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists: %v", dst, err)
				}
			} else if got := snapshot(t, dst); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s holds %q, want %q", dst, got, tc.want)
			}
			if staged, _ := filepath.Glob(filepath.Join(parent, ".fit-*")); len(staged) > 0 {
				t.Errorf("staging left behind: %v", staged)
			}
		})
	}
}

// textLen is the "textlen" stage: its trainer writes how many unlabeled
// texts it was given, so runs with other text write other models.
type textLen struct{ memo }

func (textLen) Name() string { return "textlen" }

func init() {
	rerank.RegisterStage("textlen", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		spec.ModelFile(env.Dir)
		return textLen{}, nil
	})
	rerank.RegisterTrainer("textlen", func(_ context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
		spec.Model = filepath.Join(in.Dir, "textlen.txt")
		return spec, os.WriteFile(spec.Model, []byte(fmt.Sprintln(len(in.Text))), 0o644)
	})
}

// TestBEIRUnsupervisedPublishesOnlyOnSuccess reruns an unsupervised BEIR
// experiment over an earlier one's pipeline with more text: a run whose
// training fails, self-trained or with fixed weights, leaves the earlier
// pipeline and its models as they were. (A successful self-trained run
// may drop textlen, whose model is then not published at all.)
func TestBEIRUnsupervisedPublishesOnlyOnSuccess(t *testing.T) {
	data, extra := beirDirs(t)
	// withoutIndex is what a run leaves in out but its index, which a
	// rerun builds anew.
	withoutIndex := func(t *testing.T, out string) map[string]string {
		files := snapshot(t, out)
		for name := range files {
			if strings.HasPrefix(name, "index/") {
				delete(files, name)
			}
		}
		return files
	}
	for _, tc := range []struct {
		name    string
		failAt  int // the probe trainer's failing call; 0 for none
		fixed   bool
		wantErr string
	}{
		{name: "training fails", failAt: 1, wantErr: "probe failed"},
		{name: "training fails, fixed weights", failAt: 1, fixed: true, wantErr: "probe failed"},
		{name: "success", fixed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			o := BEIROptions{Data: data, Out: out, Unsupervised: true, Pseudo: termQueries, Stages: []string{"overlap", "textlen", "probe"}}
			if tc.fixed {
				o.Pseudo = PseudoOptions{}
			}
			if err := BEIR(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(filepath.Join(out, "index")); err != nil {
				t.Fatal(err)
			}
			before := withoutIndex(t, out)

			o.Text = []string{extra}
			probe.Lock()
			probe.calls, probe.failAt = 0, tc.failAt
			probe.Unlock()
			err := BEIR(context.Background(), o)
			probe.Lock()
			probe.failAt = 0
			probe.Unlock()

			if staged, _ := filepath.Glob(filepath.Join(out, ".fit-*")); len(staged) > 0 {
				t.Errorf("staging left behind: %v", staged)
			}
			after := withoutIndex(t, out)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if after["models/textlen.txt"] == before["models/textlen.txt"] {
					t.Errorf("models/textlen.txt not replaced: %q", after["models/textlen.txt"])
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
			var changed []string
			for _, files := range []map[string]string{before, after} {
				for name := range files {
					if after[name] != before[name] && !slices.Contains(changed, name) {
						changed = append(changed, name)
					}
				}
			}
			if len(changed) > 0 {
				slices.Sort(changed)
				t.Errorf("the failed run changed the earlier run's %v", changed)
			}
		})
	}
}

// TestSweepTakesNamesLiterally sweeps folders whose names hold glob
// characters: only their own staging directories go, never a sibling's
// that the name would match as a pattern.
func TestSweepTakesNamesLiterally(t *testing.T) {
	for _, name := range []string{"out[1]", "exp*", "exp[a", "q?"} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, name)
			sibling := filepath.Join(parent, "out1")
			if name == "exp*" || name == "exp[a" {
				sibling = filepath.Join(parent, "exp2")
			} else if name == "q?" {
				sibling = filepath.Join(parent, "qx")
			}
			for _, d := range []string{filepath.Join(dir, ".fit-own"), filepath.Join(sibling, ".fit-live")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := sweep(dir, func(string, ...any) {}); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, ".fit-own")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("own staging directory kept: %v", err)
			}
			if _, err := os.Stat(filepath.Join(sibling, ".fit-live")); err != nil {
				t.Errorf("a sibling's staging directory was removed: %v", err)
			}
		})
	}
}

// TestBEIROverPlainIndex runs the recipe over an index an application
// built (Bleve's default mapping, its own field name): nothing is
// indexed, the folds' pipelines name the index's field, and the runs are
// that index's first stage and its reranking.
func TestBEIROverPlainIndex(t *testing.T) {
	data, _ := beirDirs(t)
	ds, err := dataset.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plain")
	plain, err := bleve.New(path, bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	b := plain.NewBatch()
	for _, d := range ds.Corpus {
		if err := b.Index(d.ID, map[string]any{"body": d.Text}); err != nil {
			t.Fatal(err)
		}
	}
	if err := plain.Batch(b); err != nil {
		t.Fatal(err)
	}
	plain.Close()
	out := t.TempDir()
	fields := rerank.Fields{Title: rerank.FieldList{}, Text: rerank.FieldList{"body"}}
	if err := BEIR(context.Background(), BEIROptions{Data: data, Index: path, Fields: fields, Out: out, Folds: 2, Stages: []string{"overlap", "memo"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "index")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an index was built beside the one given: %v", err)
	}
	cfg, err := rerank.ReadConfig(filepath.Join(out, "fold1", "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Fields, fields) {
		t.Fatalf("fold pipeline fields %+v, want %+v", cfg.Fields, fields)
	}
	for _, f := range []string{"baseline.trec", "run.trec"} {
		run, err := dataset.ReadRunFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if run.Len() != len(ds.Queries) {
			t.Fatalf("%s ranks %d queries, want %d", f, run.Len(), len(ds.Queries))
		}
	}
}
