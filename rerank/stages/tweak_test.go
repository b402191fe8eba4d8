package stages

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
)

// trainTWEAK trains a small TWEAK model on the SemEval B slice.
func trainTWEAK(t *testing.T, ds *dataset.Dataset, alpha float64) *tweak.Model {
	t.Helper()
	texts := make([]string, len(ds.Corpus))
	for i, d := range ds.Corpus {
		texts[i] = d.FullText()
	}
	set, err := tweak.NewSet(ds, nil, tweak.Stats{DF: tweak.CountDF(texts)}, false)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tweak.Train(context.Background(), set, tweak.Config{Loss: tweak.LossPreference, Alpha: alpha, MaxIterations: 20}, tweak.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTWEAKStage(t *testing.T) {
	ds, err := dataset.Load("../../testdata/tweak")
	if err != nil {
		t.Fatal(err)
	}
	m := trainTWEAK(t, ds, 0.1)
	dir := t.TempDir()
	if err := m.Save(filepath.Join(dir, "tweak.model")); err != nil {
		t.Fatal(err)
	}
	q := ds.Queries[1]
	var cands []rerank.Candidate
	for i, e := range ds.Candidates.Ranking(q.ID) {
		d, _ := ds.Doc(e.DocID)
		cands = append(cands, rerank.Candidate{Doc: dataset.Doc{ID: d.ID, Title: d.Title, Text: d.Text}, Rank: i + 1})
	}
	rq := rerank.Query{ID: q.ID, Text: q.FullText()}

	// Without an index, vectors come from the candidates' text.
	spec := rerank.StageSpec{Type: "tweak", Model: "tweak.model"}
	st, err := rerank.NewStage(spec, rerank.Env{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	fromText, err := st.Score(context.Background(), rq, cands)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cands {
		if want := m.Score(rq.Text, c.Title, c.Text); fromText[i] != want {
			t.Errorf("%s: stage %v, model %v", c.ID, fromText[i], want)
		}
	}
	if _, ok := st.(rerank.QueryWeighter); !ok {
		t.Error("stage does not expose query weights")
	}

	// With an index holding the model's payloads, vectors come from them
	// and give the same scores (to float32 precision).
	idx, err := index.Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if err := idx.Add(context.Background(), ds.Corpus, []index.PayloadEncoder{tweak.NewEncoder(m)}, nil); err != nil {
		t.Fatal(err)
	}
	st, err = rerank.NewStage(spec, rerank.Env{Dir: dir, Payloads: idx, Index: idx})
	if err != nil {
		t.Fatal(err)
	}
	fromPayload, err := st.Score(context.Background(), rq, cands)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cands {
		if math.Abs(fromPayload[i]-fromText[i]) > 1e-6 {
			t.Errorf("%s: payload score %v, text score %v", cands[i].ID, fromPayload[i], fromText[i])
		}
	}
	// The payload is what is read: a candidate without text still gets
	// its stored vector.
	if v, err := st.(*TWEAK).docVector(rerank.Candidate{Doc: dataset.Doc{ID: cands[0].ID}}); err != nil || len(v.Terms) == 0 {
		t.Fatalf("stored vector not read: %d terms, %v", len(v.Terms), err)
	}

	// A stage built before the index held the payloads (offline.Open's
	// temporary index, a server started empty) reads them once stored.
	later, err := index.Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer later.Close()
	st, err = rerank.NewStage(spec, rerank.Env{Dir: dir, Payloads: later, Index: later})
	if err != nil {
		t.Fatal(err)
	}
	bare := rerank.Candidate{Doc: dataset.Doc{ID: cands[0].ID}}
	if v, err := st.(*TWEAK).docVector(bare); err != nil || len(v.Terms) != 0 {
		t.Fatalf("empty index: %d terms, %v; want none computed from no text", len(v.Terms), err)
	}
	if err := later.Add(context.Background(), ds.Corpus, []index.PayloadEncoder{tweak.NewEncoder(m)}, nil); err != nil {
		t.Fatal(err)
	}
	if v, err := st.(*TWEAK).docVector(bare); err != nil || len(v.Terms) == 0 {
		t.Fatalf("payloads stored after the stage was built not read: %d terms, %v", len(v.Terms), err)
	}

	// A different model is refused, naming both.
	other := trainTWEAK(t, ds, 1)
	if err := other.Save(filepath.Join(dir, "other.model")); err != nil {
		t.Fatal(err)
	}
	_, err = rerank.NewStage(rerank.StageSpec{Type: "tweak", Model: "other.model"}, rerank.Env{Dir: dir, Payloads: idx})
	if err == nil || !strings.Contains(err.Error(), m.ID()) || !strings.Contains(err.Error(), other.ID()) {
		t.Fatalf("mismatched model: err = %v, want both %s and %s named", err, m.ID(), other.ID())
	}

	// Under its own payload name (option "payload") the other model is a
	// second TWEAK stage beside the first, and one index holds both
	// models' vectors.
	two, err := index.Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	var encs []index.PayloadEncoder
	var stages []*TWEAK
	for _, spec := range []rerank.StageSpec{spec, {Type: "tweak", Name: "tweak_other", Model: "other.model", Options: map[string]any{"payload": "tweak_other"}}} {
		st, err := rerank.NewStage(spec, rerank.Env{Dir: dir, Payloads: two, Index: two})
		if err != nil {
			t.Fatal(err)
		}
		stages = append(stages, st.(*TWEAK))
		encs = append(encs, st.(rerank.PayloadStage).PayloadEncoder())
	}
	if err := two.Add(context.Background(), ds.Corpus, encs, nil); err != nil {
		t.Fatalf("one index, two TWEAK models: %v", err)
	}
	for i, want := range []*tweak.Model{m, other} {
		v, err := stages[i].docVector(bare)
		if err != nil || len(v.Terms) == 0 {
			t.Fatalf("stage %d: stored vector not read: %d terms, %v", i, len(v.Terms), err)
		}
		if got, w := tweak.Cosine(want.QueryVector(rq.Text), v), want.Score(rq.Text, cands[0].Title, cands[0].Text); math.Abs(got-w) > 1e-6 {
			t.Errorf("stage %d reads another model's vector: %v, want %v", i, got, w)
		}
	}
}

func TestTWEAKStageNeedsModel(t *testing.T) {
	if _, err := rerank.NewStage(rerank.StageSpec{Type: "tweak"}, rerank.Env{}); err == nil {
		t.Error("stage without a model accepted")
	}
	if _, err := rerank.NewStage(rerank.StageSpec{Type: "tweak", Model: "absent.model"}, rerank.Env{Dir: t.TempDir()}); err == nil {
		t.Error("missing model file accepted")
	}
}

// docVector returns c's TWEAK vector as the stage knows it: its stored
// one, else one computed from its text.
func (s *TWEAK) docVector(c rerank.Candidate) (tweak.Vector, error) {
	b, ok, err := rerank.ReadPayload(s.stored.payloads, s.stored.name, s.stored.model, c.ID)
	if err != nil {
		return tweak.Vector{}, err
	}
	if ok {
		v, err := tweak.DecodeVector(b)
		if err != nil {
			return tweak.Vector{}, fmt.Errorf("document %s: %w", c.ID, err)
		}
		return v, nil
	}
	return s.model.DocVector(c.Title, c.Text), nil
}
