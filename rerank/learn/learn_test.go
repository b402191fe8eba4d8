package learn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// checkErr fails t unless err contains want or, for want "", is nil.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// xorExamples plants relevance = (a > 0) XOR (b > 0): no linear fusion of a
// and b can rank it, a tree ensemble can.
func xorExamples(n int, seed uint64) []Example {
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []Example
	for q := 0; q < n; q++ {
		in := rerank.FusionInput{Names: []string{"a", "b"}, Scores: [][]float64{make([]float64, 10), make([]float64, 10)}}
		labels := make([]int, 10)
		for i := 0; i < 10; i++ {
			a, b := rng.NormFloat64(), rng.NormFloat64()
			in.Candidates = append(in.Candidates, rerank.Candidate{Doc: dataset.Doc{ID: string(rune('a' + i))}, Rank: i + 1, Score: rng.Float64()})
			in.Scores[0][i], in.Scores[1][i] = a, b
			if (a > 0) != (b > 0) {
				labels[i] = 1
			}
		}
		out = append(out, Example{Input: in, Labels: labels})
	}
	return out
}

func fusedMAP(t *testing.T, f rerank.Fusion, exs []Example) float64 {
	t.Helper()
	var qs []ltrQuery
	for _, ex := range exs {
		s, err := f.Fuse(ex.Input)
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, ltrQuery{y: ex.Labels, scores: s})
	}
	return meanMAP(qs)
}

func TestLambdaMARTLearnsInteractions(t *testing.T) {
	train, test := xorExamples(150, 1), xorExamples(100, 2)
	lin, err := TrainLinear(train, LinearOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lm, err := TrainLambdaMART(train, nil, LambdaMARTOptions{Trees: 60, Rate: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	ml, mt := fusedMAP(t, lin, test), fusedMAP(t, lm, test)
	t.Logf("held-out MAP: linear %.3f, LambdaMART %.3f", ml, mt)
	if mt < 0.85 || mt < ml+0.15 {
		t.Errorf("LambdaMART MAP %.3f, linear %.3f: trees did not learn the interaction", mt, ml)
	}
	path := filepath.Join(t.TempDir(), "lm.model")
	if err := lm.Bundle().Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := rerank.LoadLambdaMART(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fusedMAP(t, back, test); got != mt {
		t.Errorf("reloaded model MAP %.4f != %.4f", got, mt)
	}
	if _, err := rerank.LoadLinear(path); err == nil {
		t.Error("a LambdaMART bundle loaded as a linear fusion")
	}
}

func TestLinearFusionLearnsWeights(t *testing.T) {
	// Relevance follows stage a; stage b is noise.
	rng := rand.New(rand.NewPCG(3, 4))
	var exs []Example
	for q := 0; q < 80; q++ {
		in := rerank.FusionInput{Names: []string{"a", "b"}, Scores: [][]float64{make([]float64, 8), make([]float64, 8)}}
		labels := make([]int, 8)
		for i := 0; i < 8; i++ {
			a := rng.NormFloat64()
			in.Candidates = append(in.Candidates, rerank.Candidate{Rank: i + 1})
			in.Scores[0][i], in.Scores[1][i] = a, rng.NormFloat64()
			if a > 0.5 {
				labels[i] = 1
			}
		}
		exs = append(exs, Example{Input: in, Labels: labels})
	}
	l, err := TrainLinear(exs, LinearOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !(l.Weights["a"] > 3*math.Abs(l.Weights["b"])) || !(l.Weights["a"] > 3*math.Abs(l.Weights[rerank.FeatureFirstRank])) {
		t.Errorf("weights %v: stage a should dominate", l.Weights)
	}
	if _, err := (&rerank.Linear{Weights: map[string]float64{"missing": 1}}).Fuse(exs[0].Input); err == nil {
		t.Error("a weight for an absent stage was accepted")
	}
}

func TestFusionTrainingRefusesBadOptions(t *testing.T) {
	exs := xorExamples(10, 5)
	for _, tc := range []struct {
		name    string
		train   func() error
		wantErr string // "" for success
	}{
		{"linear defaults", func() error { _, err := TrainLinear(exs, LinearOptions{}); return err }, ""},
		{"linear logistic", func() error { _, err := TrainLinear(exs, LinearOptions{Loss: "logistic", L2: 0.1}); return err }, ""},
		{"linear unknown loss", func() error { _, err := TrainLinear(exs, LinearOptions{Loss: "pointwise"}); return err }, `unknown fusion loss "pointwise"`},
		{"linear negative L2", func() error { _, err := TrainLinear(exs, LinearOptions{L2: -1}); return err }, "L2 penalty -1"},
		{"linear NaN L2", func() error { _, err := TrainLinear(exs, LinearOptions{L2: math.NaN()}); return err }, "L2 penalty NaN"},
		{"lambdamart small", func() error {
			_, err := TrainLambdaMART(exs, nil, LambdaMARTOptions{Trees: 2, Leaves: 2, MinLeaf: 1})
			return err
		}, ""},
		{"lambdamart negative trees", func() error { _, err := TrainLambdaMART(exs, nil, LambdaMARTOptions{Trees: -1}); return err }, "trees -1"},
		{"lambdamart one leaf", func() error { _, err := TrainLambdaMART(exs, nil, LambdaMARTOptions{Leaves: 1}); return err }, "leaves 1"},
		{"lambdamart negative leaves", func() error { _, err := TrainLambdaMART(exs, nil, LambdaMARTOptions{Leaves: -3}); return err }, "leaves -3"},
		{"lambdamart negative rate", func() error { _, err := TrainLambdaMART(exs, nil, LambdaMARTOptions{Rate: -0.1}); return err }, "rate -0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.train()
			checkErr(t, err, tc.wantErr)
		})
	}
}

func TestTrainLinearReportsOptimizerFailure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		score   float64 // stage a's score of the first candidate of the first query
		wantErr string  // "" for success
	}{
		{"finite", 0.5, ""},
		{"NaN", math.NaN(), "training fusion"},
		{"+Inf", math.Inf(1), "training fusion"},
		{"-Inf", math.Inf(-1), "training fusion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exs := xorExamples(20, 3)
			exs[0].Input.Scores[0][0] = tc.score
			l, err := TrainLinear(exs, LinearOptions{})
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && l.Weights[rerank.FeatureFirstRank] == 0 && l.Weights["a"] == 0 {
				t.Errorf("weights %v: nothing learned", l.Weights)
			}
		})
	}
}

// TestLambdasGradesAtMostZero checks that grades ≤ 0 all count as not
// relevant, as in eval: a negative grade must neither lower the ideal DCG
// nor turn the gradient of a pair around.
func TestLambdasGradesAtMostZero(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scores []float64
		grades []int
	}{
		{"no relevant", []float64{0, 0, 0}, []int{-1, 0, -1}},
		{"no relevant, scored", []float64{0.3, -1, 2}, []int{0, -2, -1}},
		{"relevant and negative", []float64{0, 0, 0}, []int{-1, 1, 0}},
		{"graded and negative", []float64{1, 0.5, -0.2, 0}, []int{-2, 2, 0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clamped := make([]int, len(tc.grades))
			for i, g := range tc.grades {
				clamped[i] = max(g, 0)
			}
			g, h := lambdas(tc.scores, tc.grades, 1)
			wg, wh := lambdas(tc.scores, clamped, 1)
			for i := range g {
				if math.Abs(g[i]-wg[i]) > 1e-12 || math.Abs(h[i]-wh[i]) > 1e-12 || h[i] < 0 {
					t.Errorf("candidate %d: gradient %.4f, hessian %.4f; want %.4f, %.4f as for grades %v", i, g[i], h[i], wg[i], wh[i], clamped)
				}
			}
		})
	}
}

// TestFusionTrainingRefusesNothingToLearn: examples without two candidates
// of different grades in one query would train weights (or trees) that
// are all zero, a fusion keeping the first-stage order, without a word.
func TestFusionTrainingRefusesNothingToLearn(t *testing.T) {
	example := func(labels ...int) Example {
		in := rerank.FusionInput{Names: []string{"s"}, Scores: [][]float64{nil}}
		for i := range labels {
			in.Candidates = append(in.Candidates, rerank.Candidate{Doc: dataset.Doc{ID: fmt.Sprint(i)}, Rank: i + 1, Score: float64(10 - i)})
			in.Scores[0] = append(in.Scores[0], float64(i%2))
		}
		return Example{Input: in, Labels: labels}
	}
	const nothing = "nothing to learn"
	for _, tc := range []struct {
		name                           string
		examples                       []Example
		pairwise, logistic, lambdamart string // wanted error substrings; "" for success
	}{
		{"no relevant candidate", []Example{example(0, 0, 0), example(0, 0)}, nothing, nothing, nothing},
		{"every candidate relevant", []Example{example(1, 1, 1), example(2, 2)}, nothing, nothing, nothing},
		{"one candidate each", []Example{example(1), example(0)}, nothing, nothing, nothing},
		{"no candidates", []Example{example()}, nothing, nothing, nothing},
		{"graded, none relevant", []Example{example(0, -1, 0)}, "", nothing, nothing},
		{"two relevance grades", []Example{example(2, 1, 1)}, "", nothing, ""},
		{"one query", []Example{example(1, 0, 0)}, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := TrainLinear(tc.examples, LinearOptions{})
			checkErr(t, err, tc.pairwise)
			_, err = TrainLinear(tc.examples, LinearOptions{Loss: "logistic"})
			checkErr(t, err, tc.logistic)
			_, err = TrainLambdaMART(tc.examples, nil, LambdaMARTOptions{Trees: 2, MinLeaf: 1})
			checkErr(t, err, tc.lambdamart)
		})
	}
}

// TestLambdaMARTRefusesTooFewToSplit: with fewer candidates than two
// minimum leaves no tree can split, and the model would keep the first
// stage's order; training says so instead.
func TestLambdaMARTRefusesTooFewToSplit(t *testing.T) {
	var examples []Example
	for q := range 3 {
		in := rerank.FusionInput{Names: []string{"s"}, Scores: [][]float64{nil}}
		var labels []int
		for i := range 10 {
			in.Candidates = append(in.Candidates, rerank.Candidate{Doc: dataset.Doc{ID: fmt.Sprint(q, "-", i)}, Rank: i + 1, Score: float64(10 - i)})
			in.Scores[0] = append(in.Scores[0], float64((i+q)%3))
			labels = append(labels, (i+q)%3/2)
		}
		examples = append(examples, Example{Input: in, Labels: labels})
	}
	for _, tc := range []struct {
		minLeaf int
		want    string
	}{
		{0, "needs at least 40 training candidates"}, // the default, 20
		{16, "needs at least 32 training candidates"},
		{15, ""},
	} {
		_, err := TrainLambdaMART(examples, nil, LambdaMARTOptions{Trees: 2, MinLeaf: tc.minLeaf})
		checkErr(t, err, tc.want)
	}
}
