package stages

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/models/deepmatch"
	"github.com/semrank/semrank/rerank"
)

// semevalASplit loads the SemEval A slice in testdata and splits it into
// 30 training and 10 dev queries.
func semevalASplit(t *testing.T) (train, dev *dataset.Dataset) {
	t.Helper()
	ds, err := dataset.Load("../../testdata/deepmatch/semeval-a")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, q := range ds.Queries[:30] {
		ids = append(ids, q.ID)
	}
	return ds.Subset(dataset.InSet(ids)), ds.Subset(dataset.NotInSet(ids))
}

// smallDeepMatch options keep DeepMatch's topic models and epochs cheap for tests.
func smallDeepMatch(extra map[string]any) map[string]any {
	o := map[string]any{"resolutions": []any{4, 8}, "lda_iterations": 10, "patch_words": 20, "epochs": 2}
	for k, v := range extra {
		o[k] = v
	}
	return o
}

// TestDeepMatchTrainers trains each matching stage as a recipe does, with
// options as a pipeline file gives them, and checks that the model lands
// in in.Dir under the stage's name, carries the options, loads through
// rerank.Config.Build and scores candidates as the model does; with dev
// lists given, the kept weights are the ones with the best MAP on them.
func TestDeepMatchTrainers(t *testing.T) {
	train, dev := semevalASplit(t)
	devQs, err := deepmatch.FromDataset(dev)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		spec   rerank.StageSpec
		useDev bool
		check  func(c deepmatch.Config) bool
	}{
		{"deepmatch with dev", rerank.StageSpec{Type: "deepmatch", Options: smallDeepMatch(map[string]any{"neurons": []any{2, 1}})}, true,
			func(c deepmatch.Config) bool {
				return slices.Equal(c.Resolutions, []int{4, 8}) && slices.Equal(c.Neurons, []int{2, 1}) && c.LDAIterations == 10 && c.Epochs == 2
			}},
		{"deepmatch JSON numbers, held-out dev", rerank.StageSpec{Type: "deepmatch", Name: "dm_small",
			Options: map[string]any{"resolutions": []any{6.0}, "lda_iterations": 5.0, "epochs": 1.0, "meta": false, "rank": 2}}, false,
			func(c deepmatch.Config) bool {
				return slices.Equal(c.Resolutions, []int{6}) && !c.Meta && c.Rank == 2 && c.Epochs == 1
			}},
		{"bilinear with dev", rerank.StageSpec{Type: "bilinear", Options: map[string]any{"dim": 8, "epochs": 3, "lr": 0.1, "l2": 0.001}}, true,
			func(c deepmatch.Config) bool { return c.Dim == 8 && c.LearningRate == 0.1 && c.L2 == 0.001 }},
		{"siamese", rerank.StageSpec{Type: "siamese", Options: map[string]any{"dim": 8, "hidden": 16, "epochs": 2, "neg_same": 2, "neg_random": 0}}, false,
			func(c deepmatch.Config) bool { return c.Hidden == 16 && c.NegSameQuery == 2 && c.NegRandom == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := rerank.TrainInput{Train: train, Dir: t.TempDir(), Seed: 7}
			if tc.useDev {
				in.Dev = dev
			}
			spec, err := rerank.TrainStage(context.Background(), tc.spec, in)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(in.Dir, tc.spec.DisplayName(tc.spec.Type)+".model"); spec.Model != want {
				t.Fatalf("model %q, want %q", spec.Model, want)
			}
			m, err := deepmatch.Load(spec.Model, tc.spec.Type)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(m.Config) {
				t.Fatalf("options %v not in the saved config %+v", tc.spec.Options, m.Config)
			}
			if m.Config.Seed != 7 {
				t.Errorf("seed %d, want in.Seed 7", m.Config.Seed)
			}

			p, err := (&rerank.Config{Stages: []rerank.StageSpec{spec}, Fusion: rerank.FusionSpec{Method: "none"}}).Build(rerank.Env{})
			if err != nil {
				t.Fatal(err)
			}
			q := devQs[0]
			cands := make([]rerank.Candidate, len(q.Cands))
			for i, c := range q.Cands {
				cands[i] = rerank.Candidate{Doc: dataset.Doc{ID: c.ID, Text: c.Text, Metadata: c.Meta}}
			}
			scores, err := p.ScoreStages(context.Background(), rerank.Query{ID: q.ID, Text: q.Text}, cands)
			if err != nil {
				t.Fatal(err)
			}
			got := scores[0]
			if want := m.ScoreQuery(q); !slices.Equal(got, want) {
				t.Fatalf("pipeline scores %v, model scores %v", got, want)
			}
			checkDeepMatchPayloads(t, spec, q.Text, cands, got)
			distinct := map[float64]bool{}
			for _, s := range got {
				if math.IsNaN(s) || math.IsInf(s, 0) {
					t.Fatalf("non-finite score in %v", got)
				}
				distinct[s] = true
			}
			if len(distinct) < 2 {
				t.Fatalf("all candidates scored alike: %v", got)
			}

			if tc.useDev {
				res, err := eval.Evaluate(deepmatch.Qrels(devQs), deepmatch.Rerank(devQs, m.ScoreQuery), eval.MustParseMetrics("map@10"))
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Value("map@10"); math.Abs(got-m.DevMAP) > 1e-12 {
					t.Errorf("in.Dev MAP of the kept weights %.6f, model's dev MAP %.6f: early stopping did not watch in.Dev", got, m.DevMAP)
				}
			}
		})
	}
}

// checkDeepMatchPayloads checks that the stage of spec scores cands alike,
// to the bit, when half of them are read from stored payloads, as want
// from their text; that payloads from another model are refused; and
// that a corrupt one is an error.
func checkDeepMatchPayloads(t *testing.T, spec rerank.StageSpec, query string, cands []rerank.Candidate, want []float64) {
	t.Helper()
	st, err := rerank.NewStage(spec, rerank.Env{})
	if err != nil {
		t.Fatal(err)
	}
	enc := st.(rerank.PayloadStage).PayloadEncoder()
	store := memPayloads{model: enc.ModelID(), name: enc.PayloadName(), data: map[string][]byte{}}
	for _, c := range cands[:len(cands)/2] {
		if store.data[c.ID], err = enc.EncodePayload(c.Doc); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := rerank.NewStage(spec, rerank.Env{Payloads: store})
	if err != nil {
		t.Fatal(err)
	}
	reads := make([]bool, len(cands))
	if err := stored.(rerank.DocReader).ReadsDocs(context.Background(), rerank.IDs(cands), reads); err != nil {
		t.Fatal(err)
	}
	for i, r := range reads {
		if r != (i >= len(cands)/2) {
			t.Fatalf("candidate %d read: %v, want it read only without a payload", i, r)
		}
	}
	got, err := stored.Score(context.Background(), rerank.Query{Text: query}, cands)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("scores with stored inputs %v, from text %v", got, want)
	}
	other := store
	other.model = spec.Type + "-0000000000000000"
	if _, err := rerank.NewStage(spec, rerank.Env{Payloads: other}); err == nil || !strings.Contains(err.Error(), "written by model") {
		t.Errorf("payload from another model accepted: %v", err)
	}
	bad := memPayloads{model: store.model, name: store.name, data: map[string][]byte{cands[0].ID: {1, 200, 3}}}
	if st, err = rerank.NewStage(spec, rerank.Env{Payloads: bad}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Score(context.Background(), rerank.Query{Text: query}, cands); err == nil {
		t.Error("corrupt payload accepted")
	}
}

// TestDeepMatchTrainerSeed checks that in.Seed decides the model: the same
// seed gives the same scores, another seed other ones.
func TestDeepMatchTrainerSeed(t *testing.T) {
	train, _ := semevalASplit(t)
	q, _ := train.Query(train.Queries[0].ID)
	var cands []string
	for _, e := range train.Candidates.Ranking(q.ID) {
		d, _ := train.Doc(e.DocID)
		cands = append(cands, d.FullText())
	}
	scores := map[uint64][][]float64{}
	for _, seed := range []uint64{1, 1, 2} {
		spec, err := rerank.TrainStage(context.Background(),
			rerank.StageSpec{Type: "bilinear", Options: map[string]any{"dim": 8, "epochs": 2}},
			rerank.TrainInput{Train: train, Dir: t.TempDir(), Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		scores[seed] = append(scores[seed], scoreWith(t, []rerank.StageSpec{spec}, q.FullText(), cands)[0])
	}
	if !slices.Equal(scores[1][0], scores[1][1]) {
		t.Errorf("seed 1 twice: %v and %v", scores[1][0], scores[1][1])
	}
	if slices.Equal(scores[1][0], scores[2][0]) {
		t.Errorf("seeds 1 and 2 gave the same scores %v", scores[1][0])
	}
}

// TestDeepMatchTrainerErrors checks that bad options are refused by name,
// before any training, and that a cancelled context stops training.
func TestDeepMatchTrainerErrors(t *testing.T) {
	train, _ := semevalASplit(t)
	for _, tc := range []struct {
		typ     string
		options map[string]any
		wantErr string
	}{
		{"deepmatch", map[string]any{"resolutions": []any{}}, "option resolutions: empty list"},
		{"deepmatch", map[string]any{"resolutions": []any{20, 0}}, "option resolutions: want a list of positive integers"},
		{"deepmatch", map[string]any{"resolutions": "20,50"}, "option resolutions: want a list of positive integers"},
		{"deepmatch", map[string]any{"neurons": []any{2.5}}, "option neurons: want a list of positive integers"},
		{"bilinear", map[string]any{"resolutions": []any{20}}, "unknown option resolutions (accepted: batch, dim, epochs,"},
		{"deepmatch", map[string]any{"hidden": 10}, "unknown option hidden (accepted:"},
		{"siamese", map[string]any{"resolution": 10}, "training siamese: unknown option resolution (accepted:"},
		{"deepmatch", map[string]any{"epochs": 1.5}, "option epochs: want an integer"},
		{"deepmatch", map[string]any{"epochs": 0}, "option epochs: want ≥ 1"},
		{"deepmatch", map[string]any{"lda_iterations": "many"}, "option lda_iterations: want a number"},
		{"bilinear", map[string]any{"lr": 0}, "option lr: want > 0"},
		{"siamese", map[string]any{"l2": -1}, "option l2: want ≥ 0"},
		{"bilinear", map[string]any{"neg_same": 0, "neg_random": 0}, "neg_same and neg_random"},
		{"siamese", map[string]any{"meta": "yes"}, "option meta"},
	} {
		t.Run(tc.typ+" "+tc.wantErr, func(t *testing.T) {
			dir := t.TempDir()
			_, err := rerank.TrainStage(context.Background(), rerank.StageSpec{Type: tc.typ, Options: tc.options}, rerank.TrainInput{Train: train, Dir: dir, Seed: 1})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
			if files, _ := os.ReadDir(dir); len(files) > 0 {
				t.Errorf("a refused spec wrote %d files", len(files))
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := rerank.TrainStage(ctx, rerank.StageSpec{Type: "deepmatch", Options: smallDeepMatch(nil)}, rerank.TrainInput{Train: train, Dir: t.TempDir()})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}
