package stages

import (
	"context"
	"math"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// TestProximityRegularizeDemo reranks BM25's top 100 from a semrank index
// of the demo collection (a SemEval-2016 subtask B slice: 500 forum
// questions, 50 judged queries) with the proximity and regularize stages.
// It wants finite scores; proximity scores no lower than the bm25 stage's
// plus log α and no higher than them plus log(α + 1/e); regularize with
// alpha 0 in the first stage's order; and neither stage's MAP below
// that of the ranking it builds on (proximity: the bm25 stage's;
// regularize: the first stage's) by more than a small margin.
func TestProximityRegularizeDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes 500 documents")
	}
	ctx := context.Background()
	ds, idx := demoTermsIndex(t)
	env := rerank.EnvFor(idx)
	build := func(typ string, opts map[string]any) rerank.Stage {
		st, err := rerank.NewStage(rerank.StageSpec{Type: typ, Options: opts}, env)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	prox, reg, reg0, bm25 := build("proximity", nil), build("regularize", nil), build("regularize", map[string]any{"alpha": 0}), build("bm25", nil)
	lo, hi := math.Log(0.3), math.Log(0.3+math.Exp(-1))
	first, bmRun, proxRun, regRun := dataset.NewRun(), dataset.NewRun(), dataset.NewRun(), dataset.NewRun()
	for _, q := range ds.Queries {
		tq, err := index.TextQuery(q.FullText())
		if err != nil {
			t.Fatal(err)
		}
		cands, err := idx.TopN(ctx, tq, 100)
		if err != nil {
			t.Fatal(err)
		}
		rq := rerank.Query{ID: q.ID, Text: q.FullText()}
		score := func(s rerank.Stage) []float64 {
			v, err := s.Score(ctx, rq, cands)
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range v {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("query %s, %s, %s: score %v", q.ID, s.Name(), cands[i].ID, x)
				}
			}
			return v
		}
		p, r, r0, b := score(prox), score(reg), score(reg0), score(bm25)
		for i, c := range cands {
			if d := p[i] - b[i]; d < lo-1e-9 || d > hi+1e-9 {
				t.Fatalf("query %s, %s: proximity − bm25 = %v, want within [log α, log(α + 1/e)]", q.ID, c.ID, d)
			}
			for j := range cands {
				if (c.Score < cands[j].Score) != (r0[i] < r0[j]) && math.Abs(c.Score-cands[j].Score) > 1e-9 {
					t.Fatalf("query %s: alpha 0 orders %s and %s unlike the first stage", q.ID, c.ID, cands[j].ID)
				}
			}
			first.Add(q.ID, dataset.Entry{DocID: c.ID, Score: -float64(c.Rank)})
			bmRun.Add(q.ID, dataset.Entry{DocID: c.ID, Score: b[i]})
			proxRun.Add(q.ID, dataset.Entry{DocID: c.ID, Score: p[i]})
			regRun.Add(q.ID, dataset.Entry{DocID: c.ID, Score: r[i]})
		}
	}
	m := eval.MustParseMetrics("map")
	mapOf := func(run dataset.Run) float64 {
		r, err := eval.Evaluate(ds.Qrels, run, m)
		if err != nil {
			t.Fatal(err)
		}
		return r.Value("map")
	}
	base, bm, p, r := mapOf(first), mapOf(bmRun), mapOf(proxRun), mapOf(regRun)
	t.Logf("MAP: BM25 (first stage) %.4f, regularize %.4f; bm25 stage %.4f, proximity %.4f", base, r, bm, p)
	if r < base-0.02 {
		t.Errorf("regularize MAP %.4f, first stage %.4f", r, base)
	}
	if p < bm-0.02 {
		t.Errorf("proximity MAP %.4f, the bm25 stage it adds to %.4f", p, bm)
	}
}
