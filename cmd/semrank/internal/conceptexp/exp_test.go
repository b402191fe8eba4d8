package conceptexp

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/dse"
	"github.com/semrank/semrank/models/s2net"
)

func TestFuse(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sys, first []float64
		want       []float64
	}{
		{"opposite orders cancel", []float64{1, 2, 3}, []float64{3, 2, 1}, []float64{0, 0, 0}},
		{"constant system keeps first stage", []float64{5, 5, 5}, []float64{1, 0, -1}, []float64{math.Sqrt(1.5), 0, -math.Sqrt(1.5)}},
	} {
		got := Fuse([][]float64{tc.sys}, [][]float64{tc.first})[0]
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}

// TestCrossValidateReport runs the whole experiment, tiny, on a SemEval
// slice: every system scores every query, and the report has a row each.
func TestCrossValidateReport(t *testing.T) {
	lists, ds, err := LoadLists("../../../../testdata/concepts/semeval-b")
	if err != nil {
		t.Fatal(err)
	}
	extra, err := LoadExtra([]string{"../../../../testdata/concepts/semeval-b"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Ks:    []int{4},
		Cs:    []int{3},
		S2Net: s2net.Config{MaxIter: 3},
		DSE:   dse.Config{D: 30, PretrainEpochs: 1, FineTuneEpochs: 2},
		Seed:  1,
		TWEAK: TweakTrainer(ds, extra.Texts),
	}
	fx, err := Prepare(context.Background(), extra, cfg)
	if err != nil {
		t.Fatal(err)
	}
	all, scores, names, err := CrossValidate(context.Background(), fx, extra, lists, 2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(lists) {
		t.Fatalf("%d of %d queries scored", len(all), len(lists))
	}
	names = AddFused(scores, names)
	for _, n := range names {
		if len(scores[n]) != len(all) {
			t.Errorf("%s: %d score lists", n, len(scores[n]))
		}
	}
	var buf bytes.Buffer
	if err := Report(&buf, all, scores, names); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{IR, TFIDF, "LSA k=4", "S2Net k=4", "DSE C=3", "DSE+TF-IDF C=3", "S2Net k=4 + IR", "TWEAK", "S2Net(TWEAK) k=4"} {
		if !strings.Contains(buf.String(), "| "+want+" |") {
			t.Errorf("report lacks %q:\n%s", want, buf.String())
		}
	}
	if got := concept.MAP(all, scores[IR]); got <= 0 {
		t.Errorf("IR MAP %v", got)
	}
}

// TestPrepareRefusesBadDimensions checks that a dimension below 1 is an
// error: k = 0 left LSA unfitted and RunSplit panicked on it, and C = 0
// pretrained DSE at its default C = 50 under the name "DSE C=0".
func TestPrepareRefusesBadDimensions(t *testing.T) {
	data, err := LoadExtra([]string{"../../../../testdata/concepts/semeval-b"})
	if err != nil {
		t.Fatal(err)
	}
	dc := dse.Config{D: 30, PretrainEpochs: 1}
	for _, cfg := range []Config{{Ks: []int{0}}, {Ks: []int{2, -1}}, {Cs: []int{0}, DSE: dc}} {
		if _, err := Prepare(context.Background(), data, cfg); err == nil || !strings.Contains(err.Error(), "dimension") {
			t.Errorf("Prepare(ks %v, cs %v): err = %v", cfg.Ks, cfg.Cs, err)
		}
	}
}

// TestTweakTrainerRelevantOnlyJudgments: with judgments that name the
// relevant documents alone, TWEAK counts the other candidates not
// relevant, as the concept models' lists do; its preference loss had no
// pair to learn from.
func TestTweakTrainerRelevantOnlyJudgments(t *testing.T) {
	lists, ds, err := LoadLists("../../../../testdata/concepts/semeval-b")
	if err != nil {
		t.Fatal(err)
	}
	relevant := dataset.Qrels{}
	for qid, m := range ds.Qrels {
		for did, g := range m {
			if g > 0 {
				relevant.Add(qid, did, 1)
			}
		}
	}
	ds.Qrels = relevant
	train := TweakTrainer(ds, nil)
	if _, err := train(context.Background(), lists); err != nil {
		t.Fatalf("TWEAK on relevant-only judgments: %v", err)
	}
}
