package stages

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/deepmatch"
	"github.com/semrank/semrank/rerank"
)

func TestDeepMatchStage(t *testing.T) {
	ds, err := dataset.Load("../../testdata/deepmatch/semeval-a")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := deepmatch.FromDataset(ds)
	if err != nil {
		t.Fatal(err)
	}
	cfg := deepmatch.DefaultConfig(deepmatch.MethodDeepMatch)
	cfg.Resolutions, cfg.LDAIterations, cfg.PatchWords, cfg.Epochs, cfg.MinDF = []int{4, 8}, 10, 20, 2, 1
	m, err := deepmatch.Train(context.Background(), qs[:30], qs[30:], cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.Save(filepath.Join(dir, "dm.model")); err != nil {
		t.Fatal(err)
	}
	st, err := rerank.NewStage(rerank.StageSpec{Type: "deepmatch", Model: "dm.model"}, rerank.Env{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	q := qs[31]
	cands := make([]rerank.Candidate, len(q.Cands))
	for i, c := range q.Cands {
		// The metadata arrives decoded from the pipeline, or as the
		// stored JSON field from a wrapped index; both must score alike.
		cands[i] = rerank.Candidate{Doc: dataset.Doc{ID: c.ID, Text: c.Text, Metadata: c.Meta}}
	}
	got, err := st.Score(context.Background(), rerank.Query{ID: q.ID, Text: q.Text}, cands)
	if err != nil {
		t.Fatal(err)
	}
	if want := m.ScoreQuery(q); !slices.Equal(got, want) {
		t.Fatalf("stage scores %v, model scores %v", got, want)
	}
	asJSON := slices.Clone(cands)
	for i := range asJSON {
		asJSON[i].Metadata = map[string]any{"meta": `{"by_question_author": ` + map[bool]string{true: "true", false: "false"}[q.Cands[i].Meta["by_question_author"] == true] + `}`}
	}
	got2, err := st.Score(context.Background(), rerank.Query{Text: q.Text}, asJSON)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, got2) {
		t.Fatalf("decoded metadata %v, JSON metadata %v", got, got2)
	}
	// Stored sides (half the candidates), scored twice, as from the
	// text, to the bit.
	enc := st.(rerank.PayloadStage).PayloadEncoder()
	store := memPayloads{model: enc.ModelID(), name: enc.PayloadName(), data: map[string][]byte{}}
	for _, c := range cands[:len(cands)/2] {
		if store.data[c.ID], err = enc.EncodePayload(c.Doc); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := rerank.NewStage(rerank.StageSpec{Type: "deepmatch", Model: "dm.model"}, rerank.Env{Dir: dir, Payloads: store})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		got3, err := stored.Score(context.Background(), rerank.Query{Text: q.Text}, cands)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, got3) {
			t.Fatalf("round %d: stored sides %v, from text %v", round, got3, got)
		}
	}
	bad := memPayloads{model: store.model, name: store.name, data: map[string][]byte{cands[0].ID: {1, 2, 3}}}
	corrupt, err := rerank.NewStage(rerank.StageSpec{Type: "deepmatch", Model: "dm.model"}, rerank.Env{Dir: dir, Payloads: bad})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := corrupt.Score(context.Background(), rerank.Query{Text: q.Text}, cands); err == nil || !strings.Contains(err.Error(), cands[0].ID) {
		t.Errorf("corrupt side: %v, want an error naming %s", err, cands[0].ID)
	}
	for _, spec := range []rerank.StageSpec{
		{Type: "deepmatch"},
		{Type: "deepmatch", Model: "missing.model"},
		{Type: "bilinear", Model: "dm.model"}, // a DeepMatch model is not a bilinear one
	} {
		if _, err := rerank.NewStage(spec, rerank.Env{Dir: dir}); err == nil {
			t.Errorf("%+v: no error", spec)
		}
	}
}
