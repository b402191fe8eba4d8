package rerank

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
)

func TestStageSpecRelativeTo(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  string
		in   StageSpec
		want StageSpec
	}{
		{"model and topics inside dir", "/x/out",
			StageSpec{Type: "ssg", Model: "/x/out/models/v.embed", Options: map[string]any{"topics": "/x/out/models/t.topics", "k": 10}},
			StageSpec{Type: "ssg", Model: "models/v.embed", Options: map[string]any{"topics": "models/t.topics", "k": 10}}},
		{"relative dir", "out/r",
			StageSpec{Type: "ssg", Model: "out/r/models/v.embed", Options: map[string]any{"topics": "out/r/models/t.topics"}},
			StageSpec{Type: "ssg", Model: "models/v.embed", Options: map[string]any{"topics": "models/t.topics"}}},
		{"absolute paths under a relative dir", "out/r",
			StageSpec{Type: "ssg", Model: absPath(t, "out/r/models/v.embed"), Options: map[string]any{"topics": absPath(t, "out/r/models/t.topics")}},
			StageSpec{Type: "ssg", Model: "models/v.embed", Options: map[string]any{"topics": "models/t.topics"}}},
		{"relative model outside dir", "out/r",
			StageSpec{Type: "wmd", Model: "shared/v.embed"},
			StageSpec{Type: "wmd", Model: "../../shared/v.embed"}},
		{"option outside dir kept", "/x/out",
			StageSpec{Type: "ssg", Options: map[string]any{"topics": "/elsewhere/t.topics"}},
			StageSpec{Type: "ssg", Options: map[string]any{"topics": "/elsewhere/t.topics"}}},
		{"plain strings kept", "out/r",
			StageSpec{Type: "meta", Options: map[string]any{"field": "position", "transform": "neglog"}},
			StageSpec{Type: "meta", Options: map[string]any{"field": "position", "transform": "neglog"}}},
		{"no model, no options", "out", StageSpec{Type: "tfidf"}, StageSpec{Type: "tfidf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := tc.in.Options["topics"]
			got := tc.in.RelativeTo(tc.dir)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if tc.in.Options["topics"] != orig {
				t.Fatal("RelativeTo changed the caller's options map")
			}
		})
	}
}

func TestStageSpecRebase(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to string
		in       StageSpec
		want     StageSpec
	}{
		{"model and topics inside from", "/x/out/.fit-1", "/x/out",
			StageSpec{Type: "ssg", Model: "/x/out/.fit-1/models/v.embed", Options: map[string]any{"topics": "/x/out/.fit-1/models/t.topics", "k": 10}},
			StageSpec{Type: "ssg", Model: "/x/out/models/v.embed", Options: map[string]any{"topics": "/x/out/models/t.topics", "k": 10}}},
		{"relative from and to", "out/r/.fit-1", "out/r",
			StageSpec{Type: "ssg", Model: "out/r/.fit-1/models/v.embed", Options: map[string]any{"topics": "out/r/.fit-1/models/t.topics"}},
			StageSpec{Type: "ssg", Model: "out/r/models/v.embed", Options: map[string]any{"topics": "out/r/models/t.topics"}}},
		{"absolute paths under a relative from stay absolute", "out/r/.fit-1", "out/r",
			StageSpec{Type: "ssg", Model: absPath(t, "out/r/.fit-1/models/v.embed"), Options: map[string]any{"topics": absPath(t, "out/r/.fit-1/models/t.topics")}},
			StageSpec{Type: "ssg", Model: absPath(t, "out/r/models/v.embed"), Options: map[string]any{"topics": absPath(t, "out/r/models/t.topics")}}},
		{"relative paths outside from kept", "out/r/.fit-1", "out/r",
			StageSpec{Type: "wmd", Model: "shared/v.embed", Options: map[string]any{"topics": "out/r/models/t.topics"}},
			StageSpec{Type: "wmd", Model: "shared/v.embed", Options: map[string]any{"topics": "out/r/models/t.topics"}}},
		{"absolute paths outside from kept", "/x/out/.fit-1", "/x/out",
			StageSpec{Type: "ssg", Model: "/x/out/.fit-10/v.embed", Options: map[string]any{"topics": "/elsewhere/t.topics"}},
			StageSpec{Type: "ssg", Model: "/x/out/.fit-10/v.embed", Options: map[string]any{"topics": "/elsewhere/t.topics"}}},
		{"from itself kept", "/x/out/.fit-1", "/x/out",
			StageSpec{Type: "wmd", Model: "/x/out/.fit-1"},
			StageSpec{Type: "wmd", Model: "/x/out/.fit-1"}},
		{"plain strings kept", "/x/out/.fit-1", "/x/out",
			StageSpec{Type: "meta", Options: map[string]any{"field": "position", "transform": "neglog"}},
			StageSpec{Type: "meta", Options: map[string]any{"field": "position", "transform": "neglog"}}},
		{"no model, no options", "out/.fit-1", "out", StageSpec{Type: "tfidf"}, StageSpec{Type: "tfidf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := tc.in.Options["topics"]
			got := tc.in.Rebase(tc.from, tc.to)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if tc.in.Options["topics"] != orig {
				t.Fatal("Rebase changed the caller's options map")
			}
		})
	}
}

// TestStageSpecRebaseThenRelativeTo: a spec trained into a staging
// directory inside dir, rebased onto dir, is written into dir's pipeline
// file exactly as the spec trained into dir itself.
func TestStageSpecRebaseThenRelativeTo(t *testing.T) {
	for _, dir := range []string{"/x/out", "out/r", absPath(t, "out/r")} {
		staging := filepath.Join(dir, ".fit-123")
		spec := func(base string) StageSpec {
			return StageSpec{Type: "ssg", Model: filepath.Join(base, "models", "v.embed"), Options: map[string]any{
				"topics":  absPath(t, filepath.Join(base, "models", "t.topics")),
				"user":    "../shared/user.topics",
				"abs":     "/shared/user.topics",
				"old":     filepath.Join(dir, "models", "kept.embed"),
				"field":   "position",
				"k":       10,
				"in_cwd":  "user.embed",
				"in_from": filepath.Join(staging, "x"),
			}}
		}
		direct, staged := spec(dir), spec(staging)
		direct.Options["in_from"] = filepath.Join(dir, "x")
		want := direct.RelativeTo(dir)
		if got := staged.Rebase(staging, dir).RelativeTo(dir); !reflect.DeepEqual(got, want) {
			t.Errorf("dir %s: got %+v, want %+v", dir, got, want)
		}
	}
}

func absPath(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func init() {
	// test_opts reads option a; its trainer reads option t, which the
	// stage accepts.
	RegisterStage("test_opts", func(spec StageSpec, env Env) (Stage, error) {
		var o testOptions
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		spec.ModelFile(env.Dir)
		return constStage{}, nil
	})
	RegisterTrainer("test_opts", func(_ context.Context, spec StageSpec, _ TrainInput) (StageSpec, error) {
		var o testOptions
		err := spec.DecodeOptions(&o)
		spec.Model = "trained"
		return spec, err
	})
}

// testOptions are test_opts's options.
type testOptions struct {
	A int `yaml:"a"`
	T int `yaml:"t"`
}

func TestStageOptionsChecked(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    StageSpec
		wantErr string // substring; "" for success
	}{
		{"no options", StageSpec{Type: "test_opts"}, ""},
		{"read option", StageSpec{Type: "test_opts", Options: map[string]any{"a": 1}}, ""},
		{"training option", StageSpec{Type: "test_opts", Options: map[string]any{"a": 1, "t": 2}}, ""},
		{"unknown option", StageSpec{Type: "test_opts", Options: map[string]any{"a": 1, "nosuch": 3}},
			`stage "test_opts": unknown option nosuch (accepted: a, t)`},
		{"unknown options, named stage", StageSpec{Type: "test_opts", Name: "x", Options: map[string]any{"b": 1, "c": 2}},
			`stage "x" (type test_opts): unknown options b, c (accepted: a, t)`},
		{"stage without options", StageSpec{Type: "test_const", Options: map[string]any{"a": 1}}, "unknown option a (accepted: none); a factory of your own reads its options with StageSpec.DecodeOptions"},
		{"bad value still reported first", StageSpec{Type: "test_opts", Options: map[string]any{"a": "x", "nosuch": 3}}, "option a: want a number"},
		// Options set in Go code may have any numeric type.
		{"int64 option", StageSpec{Type: "test_opts", Options: map[string]any{"a": int64(3)}}, ""},
		{"uint8 option", StageSpec{Type: "test_opts", Options: map[string]any{"a": uint8(3)}}, ""},
		{"float32 option", StageSpec{Type: "test_opts", Options: map[string]any{"a": float32(3)}}, ""},
		{"fractional float32 for an int", StageSpec{Type: "test_opts", Options: map[string]any{"a": float32(2.5)}}, "option a: want an integer"},
		{"factory returning nothing", StageSpec{Type: "test_nil"}, `stage "test_nil": its factory returned no stage and no error`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewStage(tc.spec, Env{})
			errMatches(t, err, tc.wantErr)
		})
	}
}

func init() {
	RegisterStage("test_nil", func(StageSpec, Env) (Stage, error) { return nil, nil })
}

func TestRegisterNilStagePanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "nil factory for stage type test_nilfactory") {
			t.Errorf("recovered %v, want a panic naming the type", r)
		}
	}()
	RegisterStage("test_nilfactory", nil)
}

func TestTrainStageOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    StageSpec
		wantErr string // substring; "" for success
	}{
		{"declared option", StageSpec{Type: "test_opts", Options: map[string]any{"t": 1}}, ""},
		{"stage option left to the stage", StageSpec{Type: "test_opts", Options: map[string]any{"a": 1}}, ""},
		{"unknown option", StageSpec{Type: "test_opts", Options: map[string]any{"u": 1}}, `training test_opts: unknown option u (accepted: a, t)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := TrainStage(context.Background(), tc.spec, TrainInput{Train: &dataset.Dataset{}, Dir: t.TempDir()})
			if !errMatches(t, err, tc.wantErr) {
				return
			}
			if out.read != nil {
				t.Fatal("trained spec still records option reads")
			}
			if _, err := NewStage(out, Env{}); err != nil {
				t.Fatalf("trained spec does not build: %v", err)
			}
		})
	}
}

// TestTrainStageRefusesMissingInput: a trainable type is not trained
// without data to learn from or a directory to write into; a type without
// a trainer needs neither.
func TestTrainStageRefusesMissingInput(t *testing.T) {
	ds := &dataset.Dataset{}
	for _, tc := range []struct {
		name    string
		typ     string
		in      TrainInput
		wantErr string // substring; "" for success
		is      error  // when set, errors.Is(err, is) must hold
	}{
		{"nil Train", "test_opts", TrainInput{Dir: "models"}, "TrainInput.Train is nil", ErrNoTrainingData},
		{"Text without Train", "test_opts", TrainInput{Text: []string{"some text"}, Dir: "models"}, "", nil},
		{"empty Dir", "test_opts", TrainInput{Train: ds}, "TrainInput.Dir is empty", nil},
		{"untrainable type", "test_const", TrainInput{}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := TrainStage(context.Background(), StageSpec{Type: tc.typ}, tc.in)
			errMatches(t, err, tc.wantErr)
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want one wrapping %v", err, tc.is)
			}
		})
	}
}

// errMatches fails t unless err is what want asks for: no error when want is
// empty, else one containing want. It reports whether there was no error,
// so that the caller goes on to check the result.
func errMatches(t *testing.T, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return true
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want one containing %q", err, want)
	}
	return false
}
