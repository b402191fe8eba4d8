package stages

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// mapStats is a hand-written collection: N documents, and the document
// frequency of each term (0 when absent).
type mapStats struct {
	n  uint64
	df map[string]uint64
}

func (s mapStats) DocCount() (uint64, error)        { return s.n, nil }
func (s mapStats) DocFreq(t string) (uint64, error) { return s.df[t], nil }

// rm3Cands are three candidates over the words a, b, c, d, with
// first-stage scores 3, 1 and 0.5. Analyzed by strings.Fields, d1 is
// {a:2 b:1}, d2 {a:1 c:1}, d3 {b:1 c:1 d:2}.
var rm3Cands = []rerank.Candidate{
	{Doc: dataset.Doc{ID: "d1", Text: "a a b"}, Score: 3, Rank: 1},
	{Doc: dataset.Doc{ID: "d2", Text: "a c"}, Score: 1, Rank: 2},
	{Doc: dataset.Doc{ID: "d3", Text: "b c d d"}, Score: 0.5, Rank: 3},
}

// TestRM3Expand checks the expanded query model against values worked
// out by hand (see each case).
func TestRM3Expand(t *testing.T) {
	reordered := []rerank.Candidate{rm3Cands[2], rm3Cands[0], rm3Cands[1]}
	negative := []rerank.Candidate{rm3Cands[0], rm3Cands[1], rm3Cands[2]}
	negative[0].Score = -1
	tests := []struct {
		name        string
		query       string
		cands       []rerank.Candidate
		docs, terms int
		lambda      float64
		want        map[string]float64
	}{
		// Feedback d1, d2 with P(q|d) 3/4 and 1/4. RM1: a = 2/3·3/4 +
		// 1/2·1/4 = 5/8, b = 1/3·3/4 = 1/4, c = 1/2·1/4 = 1/8. Two terms
		// kept, a and b, renormalised: 5/7, 2/7. With the query {a:1}:
		// a = 1/2 + 1/2·5/7 = 6/7, b = 1/2·2/7 = 1/7.
		{"two docs two terms", "a", rm3Cands, 2, 2, 0.5, map[string]float64{"a": 6.0 / 7, "b": 1.0 / 7}},
		// The feedback documents are the best ranked, wherever they are
		// in the list.
		{"by rank", "a", reordered, 2, 2, 0.5, map[string]float64{"a": 6.0 / 7, "b": 1.0 / 7}},
		// Lambda 0: the relevance model alone, every word kept.
		{"lambda 0", "a", rm3Cands, 2, 10, 0, map[string]float64{"a": 5.0 / 8, "b": 1.0 / 4, "c": 1.0 / 8}},
		// Lambda 1: the query alone, a query word missing from the
		// feedback documents included.
		{"lambda 1", "a z", rm3Cands, 2, 10, 1, map[string]float64{"a": 0.5, "z": 0.5}},
		// A negative score: the feedback documents weigh the same.
		// a = 2/3·1/2 + 1/2·1/2 = 7/12, b = 1/6, c = 1/4.
		{"negative score", "a", negative, 2, 10, 0, map[string]float64{"a": 7.0 / 12, "b": 1.0 / 6, "c": 1.0 / 4}},
		// One document, one term: d1's a (2/3) beats b (1/3).
		{"one term", "b", rm3Cands, 1, 1, 0.5, map[string]float64{"a": 0.5, "b": 0.5}},
		// Ties are broken by the word: d3's b and c weigh 1/4 each, d
		// 1/2; two kept: d and b.
		{"ties by word", "", rm3Cands[2:], 1, 2, 0.5, map[string]float64{"d": 2.0 / 3, "b": 1.0 / 3}},
		// More feedback documents than candidates: all of them.
		{"docs beyond window", "", rm3Cands[1:2], 10, 10, 0.5, map[string]float64{"a": 0.5, "c": 0.5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &RM3{Analyze: strings.Fields, Docs: tc.docs, Terms: tc.terms, Lambda: tc.lambda}
			counts := make([][]index.TermCount, len(tc.cands))
			for i, c := range tc.cands {
				var err error
				if counts[i], err = termList(nil, strings.Fields, c); err != nil {
					t.Fatal(err)
				}
			}
			got := s.Expand(rerank.Query{Text: tc.query}, tc.cands, counts)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			sum := 0.0
			for i, wt := range got {
				if i > 0 && got[i-1].Term >= wt.Term {
					t.Errorf("terms not sorted: %v", got)
				}
				if w, ok := tc.want[wt.Term]; !ok || math.Abs(wt.Weight-w) > 1e-12 {
					t.Errorf("%s: %v, want %v", wt.Term, wt.Weight, tc.want[wt.Term])
				}
				sum += wt.Weight
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("weights sum to %v, want 1", sum)
			}
		})
	}
}

// TestRM3Score checks scores against BM25 of the expanded query worked
// out by hand: q' = {a: 6/7, b: 1/7} (TestRM3Expand's first case), N = 10,
// df(a) = 2, df(b) = 5, so idf(a) = log(1 + 8.5/2.5) = log 4.4 and idf(b)
// = log(1 + 5.5/5.5) = log 2; k1 = 1.2, so a term counted tf times adds
// weight · idf · 2.2·tf / (tf + 1.2·norm), where norm is 1 with b = 0 and
// 1/4 + 3/4·|d|/3 with b = 0.75 (lengths 3, 2 and 4, average 3).
func TestRM3Score(t *testing.T) {
	stats := mapStats{n: 10, df: map[string]uint64{"a": 2, "b": 5, "c": 4, "d": 1}}
	wa, wb := 6.0/7*math.Log(4.4), 1.0/7*math.Log(2)
	tests := []struct {
		b    float64
		want []float64
	}{
		{0, []float64{wa*2.2*2/3.2 + wb*2.2/2.2, wa * 2.2 / 2.2, wb * 2.2 / 2.2}},
		{0.75, []float64{wa*2.2*2/3.2 + wb*2.2/2.2, wa * 2.2 / (1 + 1.2*0.75), wb * 2.2 / (1 + 1.2*1.25)}},
	}
	for _, tc := range tests {
		s := &RM3{Stats: stats, Analyze: strings.Fields, Docs: 2, Terms: 2, Lambda: 0.5, K1: 1.2, B: tc.b}
		got, err := s.Score(context.Background(), rerank.Query{Text: "a"}, rm3Cands)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tc.want {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("b %g, %s: %v, want %v", tc.b, rm3Cands[i].ID, got[i], tc.want[i])
			}
		}
	}
}

// TestRM3Options checks the factory's defaults and that it refuses
// settings outside their ranges, naming the option.
func TestRM3Options(t *testing.T) {
	env := rerank.Env{Stats: flatStats{}}
	st, err := rerank.NewStage(rerank.StageSpec{Type: "rm3"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if r := st.(*RM3); r.Docs != 10 || r.Terms != 30 || r.Lambda != 0.5 || r.K1 != 1.2 || r.B != 0.75 || r.Name() != "rm3" {
		t.Errorf("defaults: %+v", r)
	}
	refusesOptions(t, "rm3", env, []optionCase{
		{map[string]any{"k": 0}, "option k"},
		{map[string]any{"terms": -1}, "option terms"},
		{map[string]any{"lambda": 1.5}, "option lambda"},
		{map[string]any{"lambda": math.NaN()}, "option lambda"},
		{map[string]any{"k1": math.Inf(1)}, "option k1"},
		{map[string]any{"b": 2}, "option b"},
		{map[string]any{"fbdocs": 5}, "unknown option fbdocs"},
	})
}

// TestRM3Edge checks that windows without words, or without candidates,
// score 0 rather than NaN, and that a cancelled context stops scoring.
func TestRM3Edge(t *testing.T) {
	s := &RM3{Stats: mapStats{n: 3}, Docs: 10, Terms: 30, Lambda: 0.5, K1: 1.2, B: 0.75}
	for _, tc := range []struct {
		query string
		cands []rerank.Candidate
	}{
		{"", []rerank.Candidate{{Doc: dataset.Doc{ID: "x"}}, {Doc: dataset.Doc{ID: "y"}, Rank: 1}}},
		{"visa", []rerank.Candidate{{Doc: dataset.Doc{ID: "x", Text: "the of"}}}},
		{"visa", nil},
	} {
		got, err := s.Score(context.Background(), rerank.Query{Text: tc.query}, tc.cands)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.cands) {
			t.Fatalf("%d scores for %d candidates", len(got), len(tc.cands))
		}
		for _, v := range got {
			if v != 0 {
				t.Errorf("query %q: score %v, want 0", tc.query, v)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Score(ctx, rerank.Query{Text: "visa"}, rm3Cands); err == nil {
		t.Error("a cancelled context scored")
	}
}

// TestRM3Demo reranks BM25's top 100 from a semrank index of the demo
// collection (a SemEval-2016 subtask B slice: 500 forum questions, 50
// queries with judgments) and wants finite scores, rankings that with
// lambda 1 are the bm25 stage's, and a MAP with feedback no lower than
// BM25's less a small margin: pseudo-relevance feedback should not wreck
// a ranking.
func TestRM3Demo(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes 500 documents")
	}
	ctx := context.Background()
	ds, idx := demoTermsIndex(t)
	env := rerank.EnvFor(idx)
	build := func(opts map[string]any) rerank.Stage {
		st, err := rerank.NewStage(rerank.StageSpec{Type: "rm3", Options: opts}, env)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	rm3, queryOnly := build(nil), build(map[string]any{"lambda": 1})
	bm25, err := rerank.NewStage(rerank.StageSpec{Type: "bm25"}, env)
	if err != nil {
		t.Fatal(err)
	}
	first, reranked := dataset.NewRun(), dataset.NewRun()
	compared := 0
	for _, q := range ds.Queries {
		tq, err := index.TextQuery(q.FullText())
		if err != nil {
			t.Fatal(err)
		}
		hits, err := idx.TopN(ctx, tq, 100)
		if err != nil {
			t.Fatal(err)
		}
		cands := hits
		rq := rerank.Query{ID: q.ID, Text: q.FullText()}
		scores, err := rm3.Score(ctx, rq, cands)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := queryOnly.Score(ctx, rq, cands)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := bm25.Score(ctx, rq, cands)
		if err != nil {
			t.Fatal(err)
		}
		// With lambda 1 the query's words weigh by their count, the bm25
		// stage's once each: their orders agree when no word repeats.
		toks := env.Tokens(rq.Text)
		distinct := len(toks) == len(slices.Compact(slices.Sorted(slices.Values(toks))))
		if distinct {
			compared++
		}
		for i, c := range cands {
			if math.IsNaN(scores[i]) || math.IsInf(scores[i], 0) {
				t.Fatalf("query %s, %s: score %v", q.ID, c.ID, scores[i])
			}
			for j := range cands {
				if !distinct {
					break
				}
				if (plain[i] < plain[j]) != (ref[i] < ref[j]) && math.Abs(ref[i]-ref[j]) > 1e-9 {
					t.Fatalf("query %s: lambda 1 orders %s and %s unlike bm25 (%v, %v; bm25 %v, %v)", q.ID, c.ID, cands[j].ID, plain[i], plain[j], ref[i], ref[j])
				}
			}
			first.Add(q.ID, dataset.Entry{DocID: c.ID, Score: -float64(c.Rank)})
			reranked.Add(q.ID, dataset.Entry{DocID: c.ID, Score: scores[i]})
		}
	}
	if compared == 0 {
		t.Error("no query without repeated words to compare with bm25")
	}
	m := eval.MustParseMetrics("map")
	base, err := eval.Evaluate(ds.Qrels, first, m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval.Evaluate(ds.Qrels, reranked, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("MAP: BM25 %.4f, rm3 %.4f", base.Value("map"), got.Value("map"))
	if got.Value("map") < base.Value("map")-0.02 {
		t.Errorf("rm3 MAP %.4f, BM25 %.4f", got.Value("map"), base.Value("map"))
	}
}

// demoTermsIndex loads testdata/demo and indexes its corpus, with the
// terms payload, in memory; the index is closed when t ends.
func demoTermsIndex(t *testing.T) (*dataset.Dataset, *index.Index) {
	t.Helper()
	ds, err := dataset.Load("../../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	idx, err := index.Create("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	if err := idx.Add(context.Background(), ds.Corpus, []index.PayloadEncoder{index.TermsEncoder{}}, nil); err != nil {
		t.Fatal(err)
	}
	return ds, idx
}

// optionCase is a stage's options that NewStage must refuse, and what its
// error names.
type optionCase struct {
	opts map[string]any
	want string
}

// refusesOptions checks that NewStage refuses a stage of type typ over env
// with each case's options, naming the problem, and refuses it without
// the index's statistics.
func refusesOptions(t *testing.T, typ string, env rerank.Env, cases []optionCase) {
	t.Helper()
	for _, tc := range cases {
		_, err := rerank.NewStage(rerank.StageSpec{Type: typ, Options: tc.opts}, env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("options %v: error %v, want one naming %q", tc.opts, err, tc.want)
		}
	}
	if _, err := rerank.NewStage(rerank.StageSpec{Type: typ}, rerank.Env{}); err == nil || !strings.Contains(err.Error(), "statistics") {
		t.Errorf("without statistics: error %v", err)
	}
}
