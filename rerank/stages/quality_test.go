package stages

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/quality"
	"github.com/semrank/semrank/rerank"
)

// TestQualityTrainer trains the quality stage as the subtask A recipe does
// (with thread context) on the SemEval A slice and checks that the model
// carries the options, loads through rerank.Config.Build, scores what the
// model says given the candidates' context, and ranks the dev slice's good
// comments above the rest more often than not.
func TestQualityTrainer(t *testing.T) {
	train, dev := semevalASplit(t)
	spec := rerank.StageSpec{Type: "quality", Options: map[string]any{"context": QualityContextAll, "l2": 0.001}}
	in := rerank.TrainInput{Train: train, Dir: t.TempDir()}
	spec, err := rerank.TrainStage(context.Background(), spec, in)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(in.Dir, "quality.model"); spec.Model != want {
		t.Fatalf("model %q, want %q", spec.Model, want)
	}
	m, err := quality.Load(spec.Model)
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.L2 != 0.001 || !m.Config.Bigrams || !m.Config.Chars || strings.Join(m.Config.Context, ",") != QualityContextAll {
		t.Fatalf("saved config %+v", m.Config)
	}
	p, err := (&rerank.Config{Stages: []rerank.StageSpec{spec}, Fusion: rerank.FusionSpec{Method: "none"}}).Build(rerank.Env{})
	if err != nil {
		t.Fatal(err)
	}
	var pairs, right int
	for _, q := range dev.Queries {
		var cands []rerank.Candidate
		for _, e := range dev.Candidates.Ranking(q.ID) {
			d, _ := dev.Doc(e.DocID)
			cands = append(cands, rerank.Candidate{Doc: dataset.Doc{ID: d.ID, Text: d.Text, Metadata: d.Metadata}})
		}
		scores, err := p.ScoreStages(context.Background(), rerank.Query{ID: q.ID, Text: q.FullText()}, cands)
		if err != nil {
			t.Fatal(err)
		}
		ctxs, err := qualityContext(context.Background(), m.Config.Context, rerank.Query{}, cands)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cands {
			if want := m.Score(c.Text, ctxs[i]...); scores[0][i] != want {
				t.Fatalf("%s: stage score %v, model %v", c.ID, scores[0][i], want)
			}
			for j, o := range cands {
				if dev.Qrels[q.ID][c.ID] > 0 && dev.Qrels[q.ID][o.ID] <= 0 {
					pairs++
					if scores[0][i] > scores[0][j] {
						right++
					}
				}
			}
		}
	}
	if pairs == 0 || float64(right)/float64(pairs) <= 0.5 {
		t.Errorf("good comment above a bad one in %d of %d dev pairs", right, pairs)
	}
}

func TestQualityContextFeatures(t *testing.T) {
	got, err := qualityContext(context.Background(), strings.Split(QualityContextAll, ","), rerank.Query{}, thread)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"ctx:position=1", "ctx:asker_after", "ctx:asker_thanks", "ctx:asker_names", "ctx:user_repeats=1"},
		{"ctx:position=2", "ctx:asker_after", "ctx:asker_next", "ctx:asker_thanks", "ctx:user_repeats=0"},
		{"ctx:asker", "ctx:position=3", "ctx:user_repeats=0"},
		{"ctx:position=4", "ctx:user_repeats=1"},
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("candidate %d: %q, want %q", i, got[i], want[i])
		}
	}
}

func TestQualityTrainerErrors(t *testing.T) {
	train, _ := semevalASplit(t)
	for _, tc := range []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{"l2": -1.0}, "l2"},
		{map[string]any{"min_count": 0}, "min_count"},
		{map[string]any{"context": "asker,shoe_size"}, `unknown context feature "shoe_size"`},
		{map[string]any{"bigrams": "maybe"}, "bigrams"},
	} {
		_, err := rerank.TrainStage(context.Background(), rerank.StageSpec{Type: "quality", Options: tc.opts},
			rerank.TrainInput{Train: train, Dir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("options %v: err %v, want it to mention %q", tc.opts, err, tc.want)
		}
	}
	if _, err := rerank.NewStage(rerank.StageSpec{Type: "quality"}, rerank.Env{}); err == nil || !strings.Contains(err.Error(), "model") {
		t.Errorf("no model: %v", err)
	}
}

// TestQualityCache checks that remembered scores are the model's, and that
// a document whose text changed under the same ID is scored afresh.
func TestQualityCache(t *testing.T) {
	train, _ := semevalASplit(t)
	spec, err := rerank.TrainStage(context.Background(), rerank.StageSpec{Type: "quality"}, rerank.TrainInput{Train: train, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rerank.NewStage(spec, rerank.Env{})
	if err != nil {
		t.Fatal(err)
	}
	m := st.(*Quality).model
	cands := []rerank.Candidate{{Doc: dataset.Doc{ID: "a", Text: "you can renew it at the office"}}, {Doc: dataset.Doc{ID: "b", Text: "thanks lol"}}, {Doc: dataset.Doc{Text: "no id"}}}
	for round := range 3 {
		if round == 2 {
			cands[0].Text = "why do you ask?"
		}
		got, err := st.Score(context.Background(), rerank.Query{}, cands)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cands {
			if want := m.Score(c.Text); got[i] != want {
				t.Errorf("round %d, %q: %v, want %v", round, c.Text, got[i], want)
			}
		}
	}
}

// TestQualityPayload checks that an index built with the model's encoder
// (as offline.Open builds one for a pipeline) gives the stage the same
// scores from stored payloads, even for a candidate without text; that a
// different model's payloads are refused, naming both; and that a model
// with context features asks for no payload.
func TestQualityPayload(t *testing.T) {
	train, dev := semevalASplit(t)
	dir := t.TempDir()
	spec, err := rerank.TrainStage(context.Background(), rerank.StageSpec{Type: "quality"}, rerank.TrainInput{Train: train, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := rerank.NewStage(spec, rerank.Env{})
	if err != nil {
		t.Fatal(err)
	}
	enc := plain.(rerank.PayloadStage).PayloadEncoder()
	if enc == nil || enc.PayloadName() != quality.PayloadName {
		t.Fatalf("encoder %v", enc)
	}
	// Option "payload" stores the scores under another name, so two
	// quality stages (say, with and without character n-grams) can share
	// an index.
	renamedSpec := spec
	renamedSpec.Options = map[string]any{"payload": "quality_words"}
	if st, err := rerank.NewStage(renamedSpec, rerank.Env{}); err != nil {
		t.Fatal(err)
	} else if e := st.(rerank.PayloadStage).PayloadEncoder(); e.PayloadName() != "quality_words" || e.ModelID() != enc.ModelID() {
		t.Errorf("renamed payload: %s by %s", e.PayloadName(), e.ModelID())
	}
	idx, err := index.Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if err := idx.Add(context.Background(), dev.Corpus, []index.PayloadEncoder{enc}, nil); err != nil {
		t.Fatal(err)
	}
	stored, err := rerank.NewStage(spec, rerank.Env{Payloads: idx})
	if err != nil {
		t.Fatal(err)
	}
	var cands []rerank.Candidate
	for _, d := range dev.Corpus[:20] {
		cands = append(cands, rerank.Candidate{Doc: dataset.Doc{ID: d.ID, Title: d.Title, Text: d.Text, Metadata: d.Metadata}})
	}
	want, err := plain.Score(context.Background(), rerank.Query{}, cands)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cands {
		cands[i].Text, cands[i].Title = "", "" // only the payload can know
	}
	got, err := stored.Score(context.Background(), rerank.Query{}, cands)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("payload scores %v, text scores %v", got, want)
	}

	other, err := rerank.TrainStage(context.Background(), rerank.StageSpec{Type: "quality", Name: "other", Options: map[string]any{"l2": 0.01}},
		rerank.TrainInput{Train: train, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rerank.NewStage(other, rerank.Env{Payloads: idx})
	if err == nil || !strings.Contains(err.Error(), enc.ModelID()) {
		t.Errorf("other model on this index: err %v, want the index's model %s named", err, enc.ModelID())
	}

	withCtx, err := rerank.TrainStage(context.Background(), rerank.StageSpec{Type: "quality", Name: "ctx", Options: map[string]any{"context": "asker"}},
		rerank.TrainInput{Train: train, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rerank.NewStage(withCtx, rerank.Env{Payloads: idx})
	if err != nil {
		t.Fatal(err)
	}
	if e := st.(rerank.PayloadStage).PayloadEncoder(); e != nil {
		t.Errorf("context model asks for payload %v", e)
	}
	p := &rerank.Pipeline{Stages: []rerank.Stage{st, plain}}
	if n := len(p.Encoders()); n != 1 {
		t.Errorf("pipeline encoders: %d, want 1", n)
	}
}
