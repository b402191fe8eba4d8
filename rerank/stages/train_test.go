package stages

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
)

// TestSupervisedTrainers trains each concept stage as a recipe would, on
// the SemEval B slice in testdata, and checks that the written model loads
// in a pipeline and scores candidates; bad options are refused by name.
// The matching stages (deepmatch, bilinear, siamese) have their own, more
// thorough table in deepmatch_train_test.go.
func TestSupervisedTrainers(t *testing.T) {
	ds := semevalB(t)
	for _, tc := range []struct {
		name    string
		spec    rerank.StageSpec
		wantErr string // "" for success
	}{
		{"lsa", rerank.StageSpec{Type: "lsa", Options: map[string]any{"dim": 10}}, ""},
		{"s2net", rerank.StageSpec{Type: "s2net", Options: map[string]any{"dim": 10, "iter": 5}}, ""},
		{"s2net random init, no pairs", rerank.StageSpec{Type: "s2net", Name: "s2r", Options: map[string]any{"dim": 8, "iter": 3, "init": "random", "pairs": false}}, ""},
		{"dse", rerank.StageSpec{Type: "dse", Options: map[string]any{"c": 5, "d": 60, "epochs": 2}}, ""},
		{"lsa bad dim", rerank.StageSpec{Type: "lsa", Options: map[string]any{"dim": 0}}, "option dim"},
		{"s2net bad gamma", rerank.StageSpec{Type: "s2net", Options: map[string]any{"gamma": -1}}, "option gamma"},
		{"s2net bad init", rerank.StageSpec{Type: "s2net", Options: map[string]any{"dim": 5, "iter": 1, "init": "pca"}}, "init"},
		{"dse bad c", rerank.StageSpec{Type: "dse", Options: map[string]any{"c": "ten"}}, "option c"},
		{"s2net bad patience", rerank.StageSpec{Type: "s2net", Options: map[string]any{"patience": 0}}, "option patience"},
		{"s2net bad max_pairs", rerank.StageSpec{Type: "s2net", Options: map[string]any{"max_pairs": -1}}, "option max_pairs"},
		{"dse bad lr", rerank.StageSpec{Type: "dse", Options: map[string]any{"lr": -0.1}}, "option lr"},
		{"dse fractional pretrain_epochs", rerank.StageSpec{Type: "dse", Options: map[string]any{"pretrain_epochs": 1.5}}, "option pretrain_epochs"},
		{"s2net every option", rerank.StageSpec{Type: "s2net", Options: map[string]any{"dim": 6, "iter": 2, "patience": 1, "pair_weight": 0.5, "max_pairs": 50}}, ""},
		{"dse every option", rerank.StageSpec{Type: "dse", Options: map[string]any{"c": 4, "d": 40, "input": "tfidf-l2", "pretrain_epochs": 1, "epochs": 1, "lr": 0.01, "patience": 1}}, ""},
		// Training options stay in the trained spec, which must build.
		{"lsa every option", rerank.StageSpec{Type: "lsa", Options: map[string]any{"dim": 10, "max_terms": 500, "payload": "lsa"}}, ""},
		{"s2net refit", rerank.StageSpec{Type: "s2net", Options: map[string]any{"dim": 8, "iter": 3, "gamma": 5, "max_terms": 500, "refit": true}}, ""},
		{"dse mix", rerank.StageSpec{Type: "dse", Options: map[string]any{"c": 5, "d": 60, "epochs": 1, "mix": 0.5}}, ""},
		{"tweak every option", rerank.StageSpec{Type: "tweak", Options: map[string]any{"loss": "sse", "alpha": 0.1, "query_log": true, "max_iter": 20, "df": "corpus"}}, ""},
		{"tweak alpha auto", rerank.StageSpec{Type: "tweak", Options: map[string]any{"alpha": "auto", "max_iter": 5}}, ""},
		{"tweak bad alpha", rerank.StageSpec{Type: "tweak", Options: map[string]any{"alpha": "best"}}, "option alpha"},
		{"tweak negative alpha", rerank.StageSpec{Type: "tweak", Options: map[string]any{"alpha": -1}}, "option alpha"},
		{"tweak df from no index", rerank.StageSpec{Type: "tweak", Options: map[string]any{"df": "index"}}, "TrainInput.Index is nil"},
		{"tweak bad df", rerank.StageSpec{Type: "tweak", Options: map[string]any{"df": "web"}}, "option df"},
		// An option neither the trainer nor the stage knows: the trained
		// spec does not build.
		{"lsa misspelt option", rerank.StageSpec{Type: "lsa", Options: map[string]any{"dim": 10, "dimm": 5}}, "unknown option dimm"},
		{"tweak misspelt option", rerank.StageSpec{Type: "tweak", Options: map[string]any{"apha": 0.1}}, "unknown option apha"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := rerank.TrainInput{Train: ds, Dir: t.TempDir(), Seed: 1}
			spec, err := rerank.TrainStage(context.Background(), tc.spec, in)
			if err == nil && tc.wantErr != "" {
				_, err = rerank.NewStage(spec, rerank.Env{})
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if spec.Model == "" {
				t.Fatal("trainer set no model")
			}
			q, cands := firstList(ds)
			scores := scoreWith(t, []rerank.StageSpec{spec}, q.FullText(), cands)
			distinct := map[float64]bool{}
			for _, s := range scores[0] {
				if math.IsNaN(s) || math.IsInf(s, 0) {
					t.Fatalf("non-finite score %v", s)
				}
				distinct[s] = true
			}
			if len(distinct) < 2 {
				t.Fatalf("all %d candidates scored alike: %v", len(cands), scores[0])
			}
		})
	}
}

// TestDSEChosenMix: a negative option mix asks the DSE trainer to choose
// λ on held-out lists, and the trained spec must score with the λ chosen,
// which the model holds, not with the option's -1 as the stage's override.
func TestDSEChosenMix(t *testing.T) {
	ds := semevalB(t)
	in := rerank.TrainInput{Train: ds, Dir: t.TempDir(), Seed: 1}
	spec, err := rerank.TrainStage(context.Background(), rerank.StageSpec{Type: "dse", Options: map[string]any{"c": 5, "d": 60, "epochs": 1, "mix": -1}}, in)
	if err != nil {
		t.Fatal(err)
	}
	q, cands := firstList(ds)
	got := scoreWith(t, []rerank.StageSpec{spec}, q.FullText(), cands)
	modelOnly := rerank.StageSpec{Type: "dse", Model: spec.Model}
	want := scoreWith(t, []rerank.StageSpec{modelOnly}, q.FullText(), cands)
	if !slices.Equal(got[0], want[0]) {
		t.Fatalf("trained spec (options %v) scores %v, the model's λ %v", spec.Options, got[0], want[0])
	}
	// As an override, a mix is a weight: a negative one is refused.
	for _, mix := range []float64{-1, math.NaN()} {
		modelOnly.Options = map[string]any{"mix": mix}
		if _, err := rerank.NewStage(modelOnly, rerank.Env{}); err == nil || !strings.Contains(err.Error(), "option mix") {
			t.Errorf("mix %v: err = %v, want one naming option mix", mix, err)
		}
	}
}

// errAny stands for any error in TestTrainersRefuseIncompleteInput.
var errAny = errors.New("any error")

// TestTrainersRefuseIncompleteInput trains every registered trainer on
// inputs missing a part (the whole training set, its judgments, its
// candidate lists, its queries): each must return an error or a model,
// never panic. A training set without candidate lists is what a user has
// before writing candidates.trec; TWEAK, which needs them, says how.
func TestTrainersRefuseIncompleteInput(t *testing.T) {
	ds := semevalB(t)
	without := func(drop func(*dataset.Dataset)) *dataset.Dataset {
		c := *ds
		drop(&c)
		return &c
	}
	noQrels := without(func(d *dataset.Dataset) { d.Qrels = nil })
	noCands := without(func(d *dataset.Dataset) { d.Candidates = nil })
	noQueries := without(func(d *dataset.Dataset) { d.Queries = nil })
	// Options keep the trainers that succeed fast.
	options := map[string]map[string]any{
		"lsa": {"dim": 5}, "s2net": {"dim": 5, "iter": 2}, "dse": {"c": 5, "d": 60, "epochs": 1},
		"deepmatch": smallDeepMatch(nil), "bilinear": {"epochs": 1}, "siamese": {"epochs": 1},
		"wmd": small(nil), "ssg": smallSSG(nil),
	}
	unsupervised := map[string]bool{"wmd": true, "ssg": true}
	for _, tc := range []struct {
		name  string
		train *dataset.Dataset
		text  []string
		// want is what supervised and unsupervised trainers return: nil
		// for a model, errAny for any error, else an error errors.Is
		// finds; byType overrides it for some types.
		supervised, unsupervised error
		byType                   map[string]error
	}{
		{"nil Train", nil, nil, rerank.ErrNoTrainingData, rerank.ErrNoTrainingData, nil},
		{"nil Train, Text given", nil, unsupText(t), rerank.ErrNoTrainingData, nil, nil},
		{"Train without judgments", noQrels, nil, errAny, nil, nil},
		{"Train without candidate lists", noCands, nil, nil, nil,
			map[string]error{"tweak": tweak.ErrNoCandidates, "deepmatch": errAny, "bilinear": errAny, "siamese": errAny}},
		{"Train without queries", noQueries, nil, errAny, nil, nil},
	} {
		for _, typ := range rerank.StageTypes() {
			if !rerank.Trainable(typ) {
				continue
			}
			t.Run(tc.name+"/"+typ, func(t *testing.T) {
				want, ok := tc.byType[typ]
				switch {
				case ok:
				case unsupervised[typ]:
					want = tc.unsupervised
				default:
					want = tc.supervised
				}
				spec, err := trainNoPanic(t, rerank.StageSpec{Type: typ, Options: options[typ]},
					rerank.TrainInput{Train: tc.train, Text: tc.text, Dir: t.TempDir(), Seed: 1})
				switch {
				case want == nil && err != nil:
					t.Fatalf("err = %v, want a model", err)
				case want == nil && spec.Model == "":
					t.Fatal("no error, and no model")
				case want == errAny && err == nil, want != nil && want != errAny && !errors.Is(err, want):
					t.Fatalf("err = %v, want %v", err, want)
				}
			})
		}
	}
}

// trainNoPanic is rerank.TrainStage, failing t when it panics.
func trainNoPanic(t *testing.T, spec rerank.StageSpec, in rerank.TrainInput) (out rerank.StageSpec, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	return rerank.TrainStage(context.Background(), spec, in)
}

// firstList returns ds's first query and the texts of its candidates.
func firstList(ds *dataset.Dataset) (dataset.Query, []string) {
	q := ds.Queries[0]
	var cands []string
	for _, e := range ds.Candidates.Ranking(q.ID) {
		d, _ := ds.Doc(e.DocID)
		cands = append(cands, d.FullText())
	}
	return q, cands
}

// TestTrainProgress checks the steps trainers report to
// TrainInput.Progress: counted from 1 without gaps, never past the total
// they announce, and each training's curve; and the notes they log.
func TestTrainProgress(t *testing.T) {
	ds := semevalB(t)
	for _, tc := range []struct {
		name    string
		spec    rerank.StageSpec
		total   int    // the total announced
		logWant string // in the log
	}{
		// Six values of α, then the retraining on every query.
		{"tweak alpha auto", rerank.StageSpec{Type: "tweak", Options: map[string]any{"alpha": "auto", "max_iter": 3}}, 7 * 3, "alpha 0.003"},
		{"tweak", rerank.StageSpec{Type: "tweak", Options: map[string]any{"max_iter": 4}}, 4, "w[bias]"},
		{"bilinear", rerank.StageSpec{Type: "bilinear", Options: map[string]any{"epochs": 2, "patience": 0}}, 2, ""},
		{"s2net", rerank.StageSpec{Type: "s2net", Options: map[string]any{"dim": 5, "iter": 3}}, 4, ""},
		// Four RBMs of one epoch, the measure before fine-tuning, 2 epochs.
		{"dse", rerank.StageSpec{Type: "dse", Options: map[string]any{"c": 4, "d": 40, "pretrain_epochs": 1, "epochs": 2}}, 7, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []rerank.TrainStep
			var log strings.Builder
			in := rerank.TrainInput{Train: ds, Dir: t.TempDir(), Seed: 1, Log: &log,
				Progress: func(s rerank.TrainStep) { got = append(got, s) }}
			if _, err := rerank.TrainStage(context.Background(), tc.spec, in); err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				t.Fatal("no step reported")
			}
			for i, s := range got {
				if s.Done != i+1 || s.Total != tc.total || s.Done > s.Total {
					t.Fatalf("step %d: done %d of %d, want %d of %d", i, s.Done, s.Total, i+1, tc.total)
				}
				if math.IsNaN(s.Loss) || s.Phase == "" {
					t.Fatalf("step %d: %+v", i, s)
				}
			}
			if !strings.Contains(log.String(), tc.logWant) {
				t.Errorf("log lacks %q:\n%s", tc.logWant, log.String())
			}
		})
	}
}

// semevalB loads the SemEval B slice in testdata.
func semevalB(t *testing.T) *dataset.Dataset {
	t.Helper()
	ds, err := dataset.Load("../../testdata/concepts/semeval-b")
	if err != nil {
		t.Fatal(err)
	}
	return ds
}
