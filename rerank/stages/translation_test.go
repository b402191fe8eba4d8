package stages

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/translation"
	"github.com/semrank/semrank/rerank"
)

// TestTranslationTrainer trains the translation stage as a recipe does on
// the SemEval A slice and checks that the model carries the options, loads
// through rerank.Config.Build, scores what the model says, and puts good
// comments above the others in more of the training slice's pairs than the
// given order does.
func TestTranslationTrainer(t *testing.T) {
	train, _ := semevalASplit(t)
	spec := rerank.StageSpec{Type: "translation", Options: map[string]any{"beta": 0.7, "iterations": 5}}
	in := rerank.TrainInput{Train: train, Dir: t.TempDir()}
	spec, err := rerank.TrainStage(context.Background(), spec, in)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(in.Dir, "translation.model"); spec.Model != want {
		t.Fatalf("model %q, want %q", spec.Model, want)
	}
	m, err := translation.Load(spec.Model)
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.Beta != 0.7 || m.Config.Iterations != 5 || m.Config.Lambda != translation.DefaultConfig().Lambda {
		t.Fatalf("saved config %+v", m.Config)
	}
	p, err := (&rerank.Config{Stages: []rerank.StageSpec{spec}, Fusion: rerank.FusionSpec{Method: "none"}}).Build(rerank.Env{})
	if err != nil {
		t.Fatal(err)
	}
	var pairs, right, given int
	for _, q := range train.Queries {
		var cands []rerank.Candidate
		var texts []string
		for _, e := range train.Candidates.Ranking(q.ID) {
			d, _ := train.Doc(e.DocID)
			cands = append(cands, rerank.Candidate{Doc: dataset.Doc{ID: d.ID, Title: d.Title, Text: d.Text}})
			texts = append(texts, d.FullText())
		}
		scores, err := p.ScoreStages(context.Background(), rerank.Query{ID: q.ID, Text: q.FullText()}, cands)
		if err != nil {
			t.Fatal(err)
		}
		want := m.Score(q.FullText(), texts)
		for i, c := range cands {
			if scores[0][i] != want[i] {
				t.Fatalf("%s: stage score %v, model %v", c.ID, scores[0][i], want[i])
			}
			for j, o := range cands {
				if train.Qrels[q.ID][c.ID] > 0 && train.Qrels[q.ID][o.ID] <= 0 {
					pairs++
					if scores[0][i] > scores[0][j] {
						right++
					}
					if i < j {
						given++
					}
				}
			}
		}
	}
	if pairs == 0 || right <= given {
		t.Errorf("good comment above another in %d of %d pairs, the given order %d", right, pairs, given)
	}
}

func TestTranslationTrainerRefuses(t *testing.T) {
	train, _ := semevalASplit(t)
	for _, tc := range []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{"lambda": 0}, "lambda"},
		{map[string]any{"beta": 2}, "beta"},
		{map[string]any{"iterations": 0}, "iterations"},
		{map[string]any{"prune": "x"}, "prune"},
	} {
		spec := rerank.StageSpec{Type: "translation", Options: tc.opts}
		_, err := rerank.TrainStage(context.Background(), spec, rerank.TrainInput{Train: train, Dir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want one naming %q", tc.opts, err, tc.want)
		}
	}
	// A misspelt option is refused before training.
	_, err := rerank.TrainStage(context.Background(), rerank.StageSpec{Type: "translation", Options: map[string]any{"lamda": 0.1}}, rerank.TrainInput{Train: train, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "unknown option lamda (accepted: beta, iterations, lambda, min_count, prune)") {
		t.Errorf("misspelt option: err = %v, want one naming it and the accepted ones", err)
	}
	_, err = rerank.TrainStage(context.Background(), rerank.StageSpec{Type: "translation"}, rerank.TrainInput{Text: []string{"visa"}, Dir: t.TempDir()})
	if !errors.Is(err, rerank.ErrNoTrainingData) {
		t.Errorf("text only: err = %v, want ErrNoTrainingData", err)
	}
}
