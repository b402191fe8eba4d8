package stages

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/models/topics"
	"github.com/semrank/semrank/rerank"
)

// wmdFixture writes tiny word vectors (two separated word groups) and a
// topic model over documents of those groups into dir.
func wmdFixture(t *testing.T, dir string) {
	words := []string{"bank", "loan", "salary", "account", "beach", "desert", "camping", "sand"}
	var data []float64
	for i := range words {
		if i < 4 {
			data = append(data, 1+0.1*float64(i), 0)
		} else {
			data = append(data, 0, 1+0.1*float64(i))
		}
	}
	v, err := embed.NewVectors(words, 2, data)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Save(filepath.Join(dir, "vec.model"), embed.Config{Dim: 2}); err != nil {
		t.Fatal(err)
	}
	var docs [][]string
	for i := 0; i < 120; i++ {
		g := words[:4]
		if i%2 == 1 {
			g = words[4:]
		}
		d := make([]string, 5+i%4)
		for j := range d {
			d[j] = g[(i*7+j*3)%4]
		}
		docs = append(docs, d)
	}
	tm, err := topics.Train(context.Background(), docs, topics.Config{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.Save(filepath.Join(dir, "topics.model")); err != nil {
		t.Fatal(err)
	}
}

func TestWMDAndSSGStages(t *testing.T) {
	dir := t.TempDir()
	wmdFixture(t, dir)
	cands := []rerank.Candidate{
		{ID: "far", Text: "beach desert camping"},
		{ID: "near", Title: "Bank", Text: "loan salary"},
		{ID: "empty", Text: "the of and"},
	}
	specs := []rerank.StageSpec{
		{Type: "wmd", Model: "vec.model"},
		{Type: "ssg", Model: "vec.model", Options: map[string]any{"topics": "topics.model", "k": 2}},
		{Type: "ssg", Model: "vec.model", Options: map[string]any{"topics": "topics.model", "dropout": 0.5}},
	}
	for _, spec := range specs {
		st, err := rerank.NewStage(spec, rerank.Env{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		s, err := st.Score(context.Background(), rerank.Query{Text: "bank loan"}, cands)
		if err != nil {
			t.Fatal(err)
		}
		if !(s[1] > s[0] && s[0] > s[2]) {
			t.Errorf("%s %v: scores %v, want near > far > empty", spec.Type, spec.Options, s)
		}
		tied, err := st.Score(context.Background(), rerank.Query{Text: "the"}, cands)
		if err != nil || tied[0] != 0 || tied[1] != 0 {
			t.Errorf("%s: query without vectors: %v, %v", spec.Type, tied, err)
		}
	}
}

func TestWMDStagesRejectBadSpecs(t *testing.T) {
	dir := t.TempDir()
	wmdFixture(t, dir)
	for _, spec := range []rerank.StageSpec{
		{Type: "wmd"},
		{Type: "wmd", Model: "missing.model"},
		{Type: "ssg", Model: "vec.model"},
		{Type: "ssg", Model: "vec.model", Options: map[string]any{"topics": "vec.model"}},
		{Type: "ssg", Model: "vec.model", Options: map[string]any{"topics": "topics.model", "dropout": 1.5}},
	} {
		if _, err := rerank.NewStage(spec, rerank.Env{Dir: dir}); err == nil {
			t.Errorf("%+v accepted", spec)
		}
	}
}
