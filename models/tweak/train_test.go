package tweak

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// TestTrainReducesLoss trains each loss on twelve real SemEval queries and
// checks L-BFGS lowers the objective from the initial weights, never
// raising it between iterations.
func TestTrainReducesLoss(t *testing.T) {
	set := testSet(t, true)
	for _, loss := range Losses {
		t.Run(string(loss), func(t *testing.T) {
			cfg := Config{Loss: loss, Alpha: 0.01, QueryLog: true, MaxIterations: 100}
			start := set.objective(InitialWeights(), nil, loss, cfg.Alpha)
			var trace []float64
			m, err := Train(context.Background(), set, cfg, Options{Dev: set, Progress: func(p Progress) {
				trace = append(trace, p.Loss)
				if math.IsNaN(p.DevMAP) {
					t.Errorf("iteration %d: no dev metric", p.Iteration)
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			end := set.objective(m.W, nil, loss, cfg.Alpha)
			if !(end < start*0.99) {
				t.Errorf("loss %v → %v: not decreased by 1%%", start, end)
			}
			if len(trace) < 2 {
				t.Fatalf("only %d iterations reported", len(trace))
			}
			for i := 1; i < len(trace); i++ {
				if trace[i] > trace[i-1]+1e-9 {
					t.Errorf("loss rose at iteration %d: %v → %v", i+1, trace[i-1], trace[i])
				}
			}
			if _, ok := m.Metrics["dev_map@10"]; !ok {
				t.Errorf("no dev metrics recorded: %v", m.Metrics)
			}
			t.Logf("%s: loss %.4f → %.4f in %d iterations; w=%.3f", loss, start, end, len(trace), m.W)
		})
	}
}

func TestSelectAlpha(t *testing.T) {
	set := testSet(t, false)
	cfg := Config{Loss: LossSSE, MaxIterations: 30}
	m, table, err := SelectAlpha(context.Background(), set, set, cfg, []float64{0.01, 1}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(table) != 2 {
		t.Fatalf("%d results", len(table))
	}
	best := table[0]
	if table[1].DevMAP > best.DevMAP || (table[1].DevMAP == best.DevMAP && table[1].DevAUC > best.DevAUC) {
		best = table[1]
	}
	if m.Config.Alpha != best.Alpha {
		t.Errorf("chose alpha %v, table %+v", m.Config.Alpha, table)
	}
}

func TestTrainRejectsBadConfig(t *testing.T) {
	set := testSet(t, false)
	for _, cfg := range []Config{
		{Loss: "hinge"},
		{Loss: LossSSE, Alpha: -1},
		{Loss: LossSSE, Alpha: math.Inf(1)},
		{Loss: LossSSE, Alpha: math.NaN()},
		{Loss: LossSSE, QueryLog: true}, // the set has no query log
	} {
		if _, err := Train(context.Background(), set, cfg, Options{}); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Train(ctx, set, Config{Loss: LossSSE}, Options{}); err == nil {
		t.Error("cancelled context ignored")
	}
}

// TestTrainRefusesUnjudgedSet: a set whose candidates carry no judgment
// gives every loss nothing to fit, so training is an error, not weights
// from the regulariser alone.
func TestTrainRefusesUnjudgedSet(t *testing.T) {
	set := testSet(t, false)
	unjudged := *set
	unjudged.pairs = slices.Clone(set.pairs)
	for i := range unjudged.pairs {
		unjudged.pairs[i].judged = false
	}
	unjudged.prefs = nil
	for _, loss := range Losses {
		if _, err := Train(context.Background(), &unjudged, Config{Loss: loss, Alpha: 0.01}, Options{}); err == nil || !strings.Contains(err.Error(), "judged") {
			t.Errorf("%s: err = %v, want one about judged candidates", loss, err)
		}
	}
}

// TestNoPreferencePairsSaysJudged: BM25 candidate lists with judgments of
// relevant documents only have candidates of two kinds, judged and not,
// yet no preference pair, as the losses read judged candidates alone. The
// error said "every query's candidates share one grade", which the lists
// plainly contradict; it now says the judged ones do, and what to judge.
func TestNoPreferencePairsSaysJudged(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"corpus.jsonl":    `{"_id":"d1","text":"bank account fees"}` + "\n" + `{"_id":"d2","text":"bank visa office"}` + "\n" + `{"_id":"d3","text":"bank weather"}` + "\n",
		"queries.jsonl":   `{"_id":"q1","text":"bank fees"}` + "\n",
		"qrels/test.tsv":  "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
		"candidates.trec": "q1 Q0 d1 1 3 bm25\nq1 Q0 d2 2 2 bm25\nq1 Q0 d3 3 1 bm25\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := dataset.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewSet(ds, nil, Stats{DF: corpusDF(ds)}, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Train(context.Background(), set, Config{Loss: LossPreference, Alpha: 0.1, MaxIterations: 5}, Options{})
	if err == nil || !strings.Contains(err.Error(), "judged candidates share one grade") || !strings.Contains(err.Error(), "not judged") {
		t.Fatalf("err = %v, want one saying the judged candidates share one grade and that candidates not judged are left out", err)
	}
}
