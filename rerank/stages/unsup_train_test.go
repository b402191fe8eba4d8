package stages

import (
	"bufio"
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/rerank"
)

// unsupText returns the 400 SemEval questions of testdata/embed.
func unsupText(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../testdata/embed/questions.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// small and smallSSG keep training fast on 400 questions.
func small(opts map[string]any) map[string]any {
	out := map[string]any{"embed_dim": 20, "embed_epochs": 2}
	for k, v := range opts {
		out[k] = v
	}
	return out
}

func smallSSG(opts map[string]any) map[string]any {
	return small(merge(map[string]any{"topics_k": 5}, opts))
}

func merge(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// scoreWith writes specs into a pipeline file in another directory, loads
// it, and scores candidates built from texts with each stage.
func scoreWith(t *testing.T, specs []rerank.StageSpec, query string, cands []string) [][]float64 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := rerank.WriteConfig(path, &rerank.Config{Stages: specs, Fusion: rerank.FusionSpec{Method: "none"}}); err != nil {
		t.Fatal(err)
	}
	p, _, err := rerank.LoadPipeline(path, rerank.Env{})
	if err != nil {
		t.Fatal(err)
	}
	cs := make([]rerank.Candidate, len(cands))
	for i, c := range cands {
		cs[i] = rerank.Candidate{Doc: dataset.Doc{ID: string(rune('a' + i)), Text: c}}
	}
	scores, err := p.ScoreStages(context.Background(), rerank.Query{Text: query}, cs)
	if err != nil {
		t.Fatal(err)
	}
	return scores
}

func filesIn(t *testing.T, dir, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestUnsupervisedTrainers(t *testing.T) {
	text := unsupText(t)
	ds := &dataset.Dataset{}
	for i, s := range text[:300] {
		ds.Corpus = append(ds.Corpus, dataset.Doc{ID: string(rune('A' + i%26)), Text: s})
	}
	for i, s := range text[300:] {
		ds.Queries = append(ds.Queries, dataset.Query{ID: string(rune('a' + i%26)), Text: s})
	}
	ctx := context.Background()
	type input struct {
		text  []string
		train *dataset.Dataset
	}
	cases := []struct {
		name  string
		specs []rerank.StageSpec // trained in order into one directory
		in    input
		check func(t *testing.T, dir string, given, out []rerank.StageSpec)
	}{
		{
			name: "wmd and two ssg stages share one vectors file and one topic model",
			specs: []rerank.StageSpec{
				{Type: "wmd", Options: small(nil)},
				{Type: "ssg", Options: smallSSG(map[string]any{"k": 5})},
				{Type: "ssg", Name: "ssg-d", Options: smallSSG(map[string]any{"k": 5, "dropout": 0.5})},
			},
			in: input{text: text},
			check: func(t *testing.T, dir string, given, out []rerank.StageSpec) {
				if v := filesIn(t, dir, "vectors-*.embed"); len(v) != 1 || out[0].Model != v[0] || out[1].Model != v[0] || out[2].Model != v[0] {
					t.Errorf("vectors files %v, models %q %q %q: want one shared file", v, out[0].Model, out[1].Model, out[2].Model)
				}
				tp := filesIn(t, dir, "topics-*.topics")
				if len(tp) != 1 || out[1].Options["topics"] != tp[0] || out[2].Options["topics"] != tp[0] {
					t.Errorf("topics files %v, options %v %v: want one shared file", tp, out[1].Options["topics"], out[2].Options["topics"])
				}
				for i := range given {
					if _, ok := given[i].Options["topics"]; ok {
						t.Errorf("trainer wrote into the caller's options: %v", given[i].Options)
					}
				}
				scores := scoreWith(t, out, text[0], []string{text[0], text[1], "the of and"})
				for i, s := range scores {
					for _, x := range s {
						if math.IsNaN(x) || math.IsInf(x, 0) {
							t.Fatalf("stage %d: scores %v", i, s)
						}
					}
					if !(s[0] > s[2] && s[1] > s[2]) {
						t.Errorf("stage %s: scores %v: want the text without vectors last", out[i].DisplayName(out[i].Type), s)
					}
				}
				if s := scores[0]; !(s[0] == 0 && s[0] > s[1]) {
					t.Errorf("wmd: scores %v, want the query's own text first at distance 0", s)
				}
			},
		},
		{
			name: "training again into the same directory reuses the files untouched",
			specs: []rerank.StageSpec{
				{Type: "ssg", Options: smallSSG(nil)},
				{Type: "ssg", Options: smallSSG(nil)},
			},
			in: input{text: text},
			check: func(t *testing.T, dir string, _, out []rerank.StageSpec) {
				if !reflect.DeepEqual(out[0], out[1]) {
					t.Errorf("specs differ: %+v, %+v", out[0], out[1])
				}
				before, err := os.Stat(out[0].Model)
				if err != nil {
					t.Fatal(err)
				}
				again, err := rerank.TrainStage(ctx, rerank.StageSpec{Type: "wmd", Options: small(nil)}, rerank.TrainInput{Text: text, Dir: dir})
				if err != nil {
					t.Fatal(err)
				}
				if after, err := os.Stat(again.Model); err != nil || again.Model != out[0].Model || !os.SameFile(before, after) {
					t.Errorf("wmd after ssg: vectors %s (%v), want %s untouched", again.Model, err, out[0].Model)
				}
				// Another directory (another fold) gets the same file.
				other, err := rerank.TrainStage(ctx, rerank.StageSpec{Type: "wmd", Options: small(nil)}, rerank.TrainInput{Text: text, Dir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				a, _ := os.ReadFile(out[0].Model)
				b, _ := os.ReadFile(other.Model)
				if filepath.Base(other.Model) != filepath.Base(out[0].Model) || len(a) == 0 || string(a) != string(b) {
					t.Errorf("vectors in another directory: %s, want a copy of %s", other.Model, out[0].Model)
				}
				bundle, err := models.Load(out[0].Model, "embed", 1)
				if err != nil || bundle.Manifest.TrainingFingerprint == "" || !strings.Contains(out[0].Model, bundle.Manifest.TrainingFingerprint) {
					t.Fatalf("vectors %s: %v, want the training fingerprint in the name", out[0].Model, err)
				}
			},
		},
		{
			name: "different settings or text give different files",
			specs: []rerank.StageSpec{
				{Type: "wmd", Options: small(nil)},
				{Type: "wmd", Options: small(map[string]any{"embed_dim": 10})},
			},
			in: input{text: text},
			check: func(t *testing.T, dir string, _, out []rerank.StageSpec) {
				if out[0].Model == out[1].Model || len(filesIn(t, dir, "vectors-*.embed")) != 2 {
					t.Errorf("models %q, %q: want two files", out[0].Model, out[1].Model)
				}
			},
		},
		{
			name:  "without Text the training set's documents and queries are the text",
			specs: []rerank.StageSpec{{Type: "ssg", Options: smallSSG(nil)}},
			in:    input{train: ds},
			check: func(t *testing.T, dir string, _, out []rerank.StageSpec) {
				if out[0].Model == "" || out[0].Options["topics"] == nil {
					t.Fatalf("nothing trained: %+v", out[0])
				}
				scoreWith(t, out, text[0], []string{text[0], text[1]})
			},
		},
		{
			name: "a user's vectors and topic model are kept",
			specs: []rerank.StageSpec{
				{Type: "wmd", Options: small(nil)}, // makes the user's files
				{Type: "ssg", Options: smallSSG(nil)},
				{Type: "ssg", Model: "USER_VECTORS", Options: map[string]any{"topics_k": 5}},
				{Type: "ssg", Model: "USER_VECTORS", Options: map[string]any{"topics": "USER_TOPICS"}},
				{Type: "wmd", Model: "USER_VECTORS"},
			},
			in: input{text: text},
			check: func(t *testing.T, dir string, given, out []rerank.StageSpec) {
				if out[2].Model != given[2].Model || out[3].Model != given[3].Model || out[4].Model != given[4].Model {
					t.Errorf("user models replaced: %q %q %q", out[2].Model, out[3].Model, out[4].Model)
				}
				if out[2].Options["topics"] == nil {
					t.Errorf("missing topic model not trained: %v", out[2].Options)
				}
				if !reflect.DeepEqual(out[3], given[3]) || !reflect.DeepEqual(out[4], given[4]) {
					t.Errorf("complete specs changed: %+v, %+v", out[3], out[4])
				}
				if n := len(filesIn(t, dir, "*")); n != 2 {
					t.Errorf("%d files in the model directory, want 2 (vectors, topics)", n)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := rerank.TrainInput{Text: tc.in.text, Train: tc.in.train, Dir: dir}
			out := make([]rerank.StageSpec, len(tc.specs))
			for i, spec := range tc.specs {
				// USER_* stand for files an earlier spec of the case trained.
				if spec.Model == "USER_VECTORS" {
					spec.Model = out[0].Model
					tc.specs[i].Model = spec.Model
				}
				if spec.Options["topics"] == "USER_TOPICS" {
					spec.Options["topics"] = out[1].Options["topics"]
				}
				var err error
				if out[i], err = rerank.TrainStage(ctx, spec, in); err != nil {
					t.Fatalf("stage %d: %v", i, err)
				}
			}
			tc.check(t, dir, tc.specs, out)
		})
	}
}

func TestUnsupervisedTrainersRejectBadOptions(t *testing.T) {
	text := unsupText(t)
	for _, tc := range []struct {
		spec rerank.StageSpec
		text []string
		want string
	}{
		{rerank.StageSpec{Type: "wmd", Options: small(map[string]any{"embed_dim": "big"})}, text, "embed_dim"},
		{rerank.StageSpec{Type: "wmd", Options: small(map[string]any{"embed_dim": 0})}, text, "embed_dim"},
		{rerank.StageSpec{Type: "wmd", Options: small(map[string]any{"embed_epochs": 1.5})}, text, "embed_epochs"},
		{rerank.StageSpec{Type: "wmd", Options: small(map[string]any{"embed_sample": -1})}, text, "embed_sample"},
		{rerank.StageSpec{Type: "wmd", Options: map[string]any{"embed_dimension": 20}}, text, "unknown option embed_dimension (accepted: embed_dim,"},
		{rerank.StageSpec{Type: "wmd", Options: map[string]any{"topics_k": 5}}, text, "unknown option topics_k (accepted: embed_dim,"},
		{rerank.StageSpec{Type: "wmd", Model: "v.embed", Options: map[string]any{"embed_dim": 20}}, text, "model v.embed is given"},
		{rerank.StageSpec{Type: "ssg", Options: smallSSG(map[string]any{"topics_k": 1})}, text, "topics_k"},
		{rerank.StageSpec{Type: "ssg", Options: smallSSG(map[string]any{"topics_k": 1000})}, text, "1000 topics"},
		{rerank.StageSpec{Type: "ssg", Options: smallSSG(map[string]any{"topics_gamma": 0.5})}, text, "topics_gamma"},
		{rerank.StageSpec{Type: "ssg", Options: smallSSG(map[string]any{"topics": 3})}, text, "option topics"},
		{rerank.StageSpec{Type: "ssg", Model: "v.embed", Options: map[string]any{"topics": "t.topics", "topics_k": 5}}, text, "names t.topics"},
		{rerank.StageSpec{Type: "wmd"}, nil, "no training data"},
		{rerank.StageSpec{Type: "wmd", Options: map[string]any{"embed_min_count": 1000}}, text, "vocabulary"},
		{rerank.StageSpec{Type: "wmd", Options: small(map[string]any{"embed_init": "../../testdata/embed/glove-slice.txt"})}, text, "option embed_dim 20, but the embed_init vectors"},
		{rerank.StageSpec{Type: "wmd", Options: map[string]any{"embed_init": "../../testdata/embed/nowhere.txt"}}, text, "option embed_init"},
		{rerank.StageSpec{Type: "wmd", Options: map[string]any{"embed_method": "glove"}}, text, `option embed_method: "glove"`},
		{rerank.StageSpec{Type: "wmd", Options: small(map[string]any{"embed_method": "ppmi"})}, text, "option embed_epochs applies to embed_method sgns only"},
		{rerank.StageSpec{Type: "wmd", Options: map[string]any{"embed_method": "ppmi", "embed_init": "../../testdata/embed/glove-slice.txt"}}, text, "option embed_init applies to embed_method sgns only"},
		{rerank.StageSpec{Type: "wmd", Model: "v.embed", Options: map[string]any{"embed_method": "ppmi"}}, text, "option embed_method trains word vectors, but model v.embed is given"},
	} {
		_, err := rerank.TrainStage(context.Background(), tc.spec, rerank.TrainInput{Text: tc.text, Dir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", tc.spec, err, tc.want)
		}
	}
}

// trainWMD trains a wmd stage with options opts on text into dir.
func trainWMD(t *testing.T, text []string, dir string, opts map[string]any) rerank.StageSpec {
	t.Helper()
	spec, err := rerank.TrainStage(context.Background(), rerank.StageSpec{Type: "wmd", Options: opts}, rerank.TrainInput{Text: text, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestUnsupervisedTrainerPPMI trains a wmd stage's vectors by counting
// (option embed_method ppmi) and wants a vectors file apart from the
// skip-gram's, the same file when trained again, and scores that put the
// query's own text first.
func TestUnsupervisedTrainerPPMI(t *testing.T) {
	text := unsupText(t)
	dir := t.TempDir()
	train := func(opts map[string]any) rerank.StageSpec { return trainWMD(t, text, dir, opts) }
	ppmi := train(map[string]any{"embed_method": "ppmi", "embed_dim": 20})
	if sgns := train(small(nil)); sgns.Model == ppmi.Model {
		t.Fatalf("one vectors file, %s, for both methods", ppmi.Model)
	}
	if again := train(map[string]any{"embed_method": "ppmi", "embed_dim": 20}); again.Model != ppmi.Model {
		t.Errorf("trained again into %s, first %s", again.Model, ppmi.Model)
	}
	v, err := embed.Load(ppmi.Model)
	if err != nil {
		t.Fatal(err)
	}
	if v.Dim != 20 {
		t.Errorf("%d dimensions, want 20", v.Dim)
	}
	s := scoreWith(t, []rerank.StageSpec{ppmi}, text[0], []string{text[0], text[1]})[0]
	if !(s[0] > s[1]) {
		t.Errorf("scores %v: want the query's own text first", s)
	}
}

// TestUnsupervisedTrainerInit trains a wmd stage's vectors from the GloVe
// slice (option embed_init) and wants its dimension, its words kept below
// the minimum count, a vectors file apart from one trained without it,
// and the same file when trained again.
func TestUnsupervisedTrainerInit(t *testing.T) {
	const glove = "../../testdata/embed/glove-slice.txt"
	text := unsupText(t)
	dir := t.TempDir()
	train := func(opts map[string]any) rerank.StageSpec { return trainWMD(t, text, dir, opts) }
	withInit := train(map[string]any{"embed_epochs": 1, "embed_init": glove})
	plain := train(map[string]any{"embed_epochs": 1})
	if withInit.Model == plain.Model {
		t.Fatalf("one vectors file, %s, with and without embed_init", plain.Model)
	}
	if again := train(map[string]any{"embed_epochs": 1, "embed_init": glove}); again.Model != withInit.Model {
		t.Errorf("trained again into %s, first %s", again.Model, withInit.Model)
	}
	v, err := embed.Load(withInit.Model)
	if err != nil {
		t.Fatal(err)
	}
	pre, err := embed.LoadFile(glove, embed.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if v.Dim != pre.Dim {
		t.Errorf("%d dimensions, want the slice's %d", v.Dim, pre.Dim)
	}
	p, err := embed.Load(plain.Model)
	if err != nil {
		t.Fatal(err)
	}
	rare := 0 // words of the slice below the minimum count: kept with it only
	for _, w := range pre.Words {
		_, inInit := v.Index(w)
		_, inPlain := p.Index(w)
		if inInit && !inPlain {
			rare++
		}
	}
	if rare == 0 {
		t.Error("no word of the slice below the minimum count was kept")
	}
}
