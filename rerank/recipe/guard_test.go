package recipe

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/learn"
)

// guardExamples makes n queries of 20 candidates, one relevant, which
// the first stage ranks at a random place in the top 10, with stage
// scores: "oracle" scores the relevant candidate high and the others at
// random; "noise" scores every candidate at random; "half" is the oracle
// on every other query and noise on the rest.
func guardExamples(n int, stages ...string) []learn.Example {
	rng := rand.New(rand.NewPCG(1, 2))
	var out []learn.Example
	for q := range n {
		rel := rng.IntN(10)
		ex := learn.Example{Input: rerank.FusionInput{Names: stages}, Labels: make([]int, 20)}
		ex.Labels[rel] = 1
		for i := range 20 {
			ex.Input.Candidates = append(ex.Input.Candidates, rerank.Candidate{Doc: dataset.Doc{ID: fmt.Sprintf("d%d", i)}, Rank: i + 1, Score: float64(20 - i)})
		}
		for _, s := range stages {
			col := make([]float64, 20)
			for i := range col {
				col[i] = rng.Float64()
				if i == rel && (s == "oracle" || s == "half" && q%2 == 0) {
					col[i] += 2
				}
			}
			ex.Input.Scores = append(ex.Input.Scores, col)
		}
		out = append(out, ex)
	}
	return out
}

func TestSelect(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stages []string
		kept   []string
	}{
		{"oracle kept, noise dropped", []string{"noise", "oracle", "noise2"}, []string{"oracle"}},
		{"half an oracle still helps", []string{"half", "noise"}, []string{"half"}},
		{"noise alone: the first stage", []string{"noise", "noise2"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := Select(guardExamples(60, tc.stages...), learn.LinearOptions{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(sel.Kept, tc.kept) {
				t.Fatalf("kept %v, want %v", sel.Kept, tc.kept)
			}
			if tc.kept == nil {
				if sel.Fusion != nil || sel.Fused != sel.FirstStage {
					t.Errorf("nothing kept, but fusion %v and MAP %.4f, want none and the first stage's %.4f", sel.Fusion, sel.Fused, sel.FirstStage)
				}
			} else if sel.Fused <= sel.FirstStage || sel.Test.PTTest >= minGainP || sel.Fusion.Weights[tc.kept[0]] <= 0 {
				t.Errorf("kept fusion MAP %.4f vs first stage %.4f (p %.4f), weights %v: want a significant gain from a positive weight", sel.Fused, sel.FirstStage, sel.Test.PTTest, sel.Fusion.Weights)
			}
			var b bytes.Buffer
			if err := sel.Write(&b); err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.stages {
				if !strings.Contains(b.String(), s) {
					t.Errorf("report lacks stage %s:\n%s", s, b.String())
				}
			}
		})
	}
}

// TestSelectPrior: a fixed fusion that ranks better on the held-out
// examples than the learned one (or as well) is chosen, and one that ranks
// worse is not.
func TestSelectPrior(t *testing.T) {
	examples := guardExamples(60, "noise", "oracle")
	for _, tc := range []struct {
		name  string
		prior map[string]float64
		want  bool
	}{
		{"better: the oracle alone ranks perfectly", map[string]float64{"oracle": 1, "noise": 0}, true},
		{"worse: noise", map[string]float64{"noise": 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prior := &rerank.Linear{Weights: tc.prior}
			sel, err := Select(examples, learn.LinearOptions{}, prior)
			if err != nil {
				t.Fatal(err)
			}
			if sel.Prior != tc.want || (sel.Fusion == prior) != tc.want {
				t.Fatalf("prior chosen %v (fusion %v), want %v", sel.Prior, sel.Fusion.Weights, tc.want)
			}
			if tc.want && (!reflect.DeepEqual(sel.Kept, []string{"oracle"}) || sel.Fused != 1) {
				t.Errorf("kept %v with MAP %v, want the prior's weighted stage, oracle, and MAP 1", sel.Kept, sel.Fused)
			}
		})
	}
}

// TestSelectTooFewFound: with fewer than minFound examples holding a
// relevant candidate, nothing is kept but a prior, and the report says
// why.
func TestSelectTooFewFound(t *testing.T) {
	examples := guardExamples(30, "oracle")
	for i := range examples[minFound-1:] {
		clear(examples[minFound-1+i].Labels)
	}
	sel, err := Select(examples, learn.LinearOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := sel.Write(&b); err != nil {
		t.Fatal(err)
	}
	if sel.Kept != nil || sel.Fusion != nil || sel.Found != minFound-1 || !strings.Contains(b.String(), "too few") {
		t.Errorf("kept %v, fusion %v, found %d; report %q: want nothing kept, %d found, and why", sel.Kept, sel.Fusion, sel.Found, b.String(), minFound-1)
	}
	if _, err := Select(nil, learn.LinearOptions{}, nil); err != nil {
		t.Errorf("no examples: %v, want a selection of nothing", err)
	}
	// A prior stands, since nothing can beat it.
	prior := &rerank.Linear{Weights: map[string]float64{rerank.FeatureFirstRank: 1, "oracle": 1}}
	sel, err = Select(examples, learn.LinearOptions{}, prior)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Prior || sel.Fusion != prior || !reflect.DeepEqual(sel.Kept, []string{"oracle"}) {
		t.Errorf("with a prior: prior %v, kept %v, want the prior and its stage", sel.Prior, sel.Kept)
	}
}
