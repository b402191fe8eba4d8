package embed

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
)

func TestTrainPPMISeparatesTopics(t *testing.T) {
	var steps []string
	v, err := TrainWithProgress(context.Background(), topicSentences(), Config{Method: MethodPPMI, Dim: 4, Window: 2, PruneTop: -1},
		func(step, of int) { steps = append(steps, fmt.Sprint(step, "/", of)) })
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(steps) != "[1/1]" {
		t.Errorf("progress reported %v, want 1/1", steps)
	}
	checkSeparated(t, v)
	for i := range v.Len() {
		if n := floats.Norm(v.Vector(i), 2); math.Abs(n-1) > 1e-12 {
			t.Errorf("%s: norm %g, want 1", v.Words[i], n)
		}
	}
}

func TestTrainPPMIOnSemEvalSlice(t *testing.T) {
	sents := sliceSentences(t)
	cfg := Config{Method: MethodPPMI, Dim: 16, Seed: 3}
	v, err := Train(context.Background(), sents, cfg)
	if err != nil {
		t.Fatal(err)
	}
	words, counts, pruned := Vocabulary(sents, 2, 30)
	if !reflect.DeepEqual(v.Words, words) || !reflect.DeepEqual(v.Counts, counts) {
		t.Error("the vocabulary is not Vocabulary's with the default minimum count and pruning")
	}
	for _, w := range pruned {
		if _, ok := v.Lookup(w); ok {
			t.Errorf("pruned word %q has a vector", w)
		}
	}
	again, err := Train(context.Background(), sents, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v.Data, again.Data) {
		t.Error("training is not deterministic for a fixed seed")
	}
	// Words the forum uses together for one need sit nearer each other
	// than words of unrelated needs.
	near := func(a, b string) float64 {
		va, ok1 := v.Lookup(a)
		vb, ok2 := v.Lookup(b)
		if !ok1 || !ok2 {
			t.Fatalf("%q or %q has no vector", a, b)
		}
		return cosine(va, vb)
	}
	for _, w := range [][3]string{{"salary", "allowance", "school"}, {"permit", "residency", "food"}, {"sponsor", "employer", "food"}} {
		if a, b := near(w[0], w[1]), near(w[0], w[2]); a <= b {
			t.Errorf("cos(%s, %s) %.3f ≤ cos(%[1]s, %s) %.3f", w[0], w[1], a, w[2], b)
		}
	}
	path := t.TempDir() + "/v.model"
	if err := v.Save(path, cfg); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil || !reflect.DeepEqual(back.Data, v.Data) {
		t.Fatalf("bundle round trip: %v", err)
	}
}

func TestTrainPPMIRefuses(t *testing.T) {
	two := [][]string{{"a", "b"}, {"a", "b"}}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		sents [][]string
		cfg   Config
		want  string
	}{
		{"unknown method", context.Background(), two, Config{Method: "glove", PruneTop: -1}, `method "glove"`},
		{"initial vectors", context.Background(), two, Config{Method: MethodPPMI, PruneTop: -1, Dim: 1, Init: &Vectors{Dim: 1}}, "initial vectors are for method sgns"},
		{"canceled", canceled, topicSentences(), Config{Method: MethodPPMI, PruneTop: -1, Dim: 2}, context.Canceled.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Train(tc.ctx, tc.sents, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if tc.ctx == canceled && !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, not context.Canceled", err)
			}
		})
	}
}

// TestTrainPPMIFewWords trains more dimensions than there are words: as
// many components as words, the others 0.
func TestTrainPPMIFewWords(t *testing.T) {
	v, err := Train(context.Background(), topicSentences(), Config{Method: MethodPPMI, Dim: 20, Window: 2, PruneTop: -1})
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 12 || v.Dim != 20 {
		t.Fatalf("%d words × %d dimensions, want 12 × 20", v.Len(), v.Dim)
	}
	for i := range v.Len() {
		x := v.Vector(i)
		if n := floats.Norm(x, 2); math.Abs(n-1) > 1e-12 {
			t.Errorf("%s: norm %g, want 1", v.Words[i], n)
		}
		if floats.Norm(x[12:], 2) != 0 {
			t.Errorf("%s: components past the 12th %v, want 0", v.Words[i], x[12:])
		}
	}
	checkSeparated(t, v)
}

// TestConfigJSON pins the skip-gram's configuration as bundles and
// fingerprints have written it since before methods existed, however the
// default method is asked for, and checks that a counted model's holds
// only what its trainer reads.
func TestConfigJSON(t *testing.T) {
	const sgns = `{"dim":100,"window":5,"negative":5,"epochs":5,"min_count":2,"sample":0.001,"alpha":0.025,"prune_top":30,"seed":1}`
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, sgns},
		{Config{Method: MethodSGNS}, sgns},
		{Config{Method: MethodPPMI, Epochs: 7, Negative: 2, Sample: 1, Alpha: 1}, `{"method":"ppmi","dim":100,"window":5,"min_count":2,"prune_top":30,"seed":1}`},
	} {
		b, err := json.Marshal(tc.cfg.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%+v: config %s, want %s", tc.cfg, b, tc.want)
		}
	}
}

// TestCooccurrences checks the counted matrix against a dense count of
// every pair, both ways, on random sentences, and that each column lists
// its rows in order.
func TestCooccurrences(t *testing.T) {
	r := rng(5)
	for _, tc := range []struct{ n, win int }{{1, 1}, {3, 2}, {7, 5}, {20, 3}} {
		var ids [][]int32
		for range 30 {
			s := make([]int32, 1+r.next()%12)
			for i := range s {
				s[i] = int32(r.next() % uint64(tc.n))
			}
			ids = append(ids, s)
		}
		want := make([]float64, tc.n*tc.n)
		for _, s := range ids {
			for p := range s {
				for d := 1; d <= tc.win && p+d < len(s); d++ {
					x := float64(tc.win-d+1) / float64(tc.win)
					want[int(s[p])*tc.n+int(s[p+d])] += x
					want[int(s[p+d])*tc.n+int(s[p])] += x
				}
			}
		}
		x, err := cooccurrences(context.Background(), ids, tc.n, tc.win)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float64, tc.n*tc.n)
		for j := range x.Cols() {
			for p := x.Ptr[j]; p < x.Ptr[j+1]; p++ {
				if p > x.Ptr[j] && x.Idx[p] <= x.Idx[p-1] {
					t.Errorf("n %d: column %d's rows out of order", tc.n, j)
				}
				got[x.Idx[p]*tc.n+j] = x.Val[p]
			}
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Errorf("n %d window %d: cell (%d, %d) = %g, want %g", tc.n, tc.win, i/tc.n, i%tc.n, got[i], want[i])
			}
		}
	}
}

// BenchmarkTrain trains each method on the SemEval slice, the skip-gram
// for the recipes' 10 epochs.
func BenchmarkTrain(b *testing.B) {
	sents := sliceSentences(b)
	for _, cfg := range []Config{{Method: MethodSGNS, Epochs: 10}, {Method: MethodPPMI}} {
		b.Run(cmp.Or(cfg.Method, MethodSGNS), func(b *testing.B) {
			for b.Loop() {
				if _, err := Train(context.Background(), sents, cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
