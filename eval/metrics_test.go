package eval

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// ranked returns entries for ids in the given order with strictly
// decreasing scores, so that Run.Sorted keeps that order.
func ranked(ids ...string) []dataset.Entry {
	es := make([]dataset.Entry, len(ids))
	for i, id := range ids {
		es[i] = dataset.Entry{DocID: id, Score: float64(len(ids) - i), Rank: i + 1}
	}
	return es
}

// scored returns entries with the given scores, in the given order.
func scored(pairs ...any) []dataset.Entry {
	var es []dataset.Entry
	for i := 0; i < len(pairs); i += 2 {
		es = append(es, dataset.Entry{DocID: pairs[i].(string), Score: pairs[i+1].(float64), Rank: i/2 + 1})
	}
	return es
}

const tol = 1e-12

func TestMetrics(t *testing.T) {
	// a, c, e relevant (e twice as much); b, d judged not relevant.
	graded := map[string]int{"a": 1, "b": 0, "c": 1, "d": 0, "e": 2}
	// x relevant but never retrieved in the rankings below.
	missed := map[string]int{"a": 1, "b": 0, "x": 1}
	none := map[string]int{"a": 0, "b": 0}
	log3 := math.Log2(3)

	tests := []struct {
		name   string
		metric string
		judged map[string]int
		ranked []dataset.Entry
		want   float64
	}{
		// SemEval MAP: precision at each relevant position in the top k,
		// averaged over the relevant ones found there.
		{"map@10 all found", "map@10", graded, ranked("a", "b", "c", "d", "e"), (1 + 2.0/3 + 3.0/5) / 3},
		{"map@3 divides by hits in top 3", "map@3", graded, ranked("a", "b", "c", "d", "e"), (1 + 2.0/3) / 2},
		{"map@10 ignores unretrieved relevant", "map@10", missed, ranked("a", "b"), 1},
		{"map@10 no relevant judged is 0", "map@10", none, ranked("a", "b"), 0},
		{"map@10 no relevant retrieved is 0", "map@10", graded, ranked("b", "d"), 0},
		{"map@1 relevant below cutoff", "map@1", graded, ranked("b", "a"), 0},
		{"map@10 unjudged counts as not relevant", "map@10", graded, ranked("z", "a"), 1.0 / 2},
		// trec_eval MAP divides by every relevant document judged.
		{"map all found", "map", graded, ranked("a", "b", "c", "d", "e"), (1 + 2.0/3 + 3.0/5) / 3},
		{"map unretrieved relevant lowers it", "map", missed, ranked("a", "b"), (1 + 0) / 2.0},
		{"map late hit", "map", missed, ranked("b", "x", "a"), (1.0/2 + 2.0/3) / 2},
		{"map no relevant", "map", none, ranked("a", "b"), 0},
		// MRR@k.
		{"mrr@10 first", "mrr@10", graded, ranked("a", "b"), 1},
		{"mrr@10 third", "mrr@10", graded, ranked("b", "d", "c", "a"), 1.0 / 3},
		{"mrr@2 beyond cutoff", "mrr@2", graded, ranked("b", "d", "c"), 0},
		{"mrr whole list", "mrr", graded, ranked("b", "d", "z", "e"), 1.0 / 4},
		{"mrr@10 none", "mrr@10", none, ranked("a", "b"), 0},
		// P@k divides by k even when fewer documents were retrieved.
		{"p@1 hit", "p@1", graded, ranked("a", "b"), 1},
		{"p@2", "p@2", graded, ranked("a", "b", "c"), 1.0 / 2},
		{"p@10 short list", "p@10", graded, ranked("a", "b", "c", "d", "e"), 3.0 / 10},
		// R@k: relevant found in the top k over relevant judged.
		{"r@2", "r@2", graded, ranked("a", "b", "c", "d", "e"), 1.0 / 3},
		{"r@10", "r@10", graded, ranked("a", "b", "c", "d", "e"), 1},
		{"r@10 missed", "r@10", missed, ranked("a", "b"), 1.0 / 2},
		{"r@10 no relevant", "r@10", none, ranked("a", "b"), 0},
		// nDCG with the grade as gain and a log2(rank+1) discount; the
		// ideal list is the judged grades sorted, cut at k.
		{"ndcg@1", "ndcg@1", graded, ranked("a", "b", "c", "d", "e"), 1.0 / 2},
		{"ndcg@3", "ndcg@3", graded, ranked("a", "b", "c", "d", "e"), (1 + 1.0/2) / (2 + 1/log3 + 1.0/2)},
		{"ndcg whole list", "ndcg", graded, ranked("a", "b", "c", "d", "e"),
			(1 + 1.0/2 + 2/math.Log2(6)) / (2 + 1/log3 + 1.0/2)},
		{"ndcg@3 ideal order", "ndcg@3", graded, ranked("e", "a", "c", "b"), 1},
		{"ndcg@10 missed relevant", "ndcg@10", missed, ranked("a", "b"), 1 / (1 + 1/log3)},
		{"ndcg@10 no relevant", "ndcg@10", none, ranked("a", "b"), 0},
		// AUC over judged (relevant, not relevant) pairs.
		{"auc half the pairs", "auc", graded, ranked("a", "b", "c", "d", "e"), 3.0 / 6},
		{"auc perfect", "auc", graded, ranked("a", "c", "e", "b", "d"), 1},
		{"auc reversed", "auc", graded, ranked("b", "d", "a", "c", "e"), 0},
		{"auc ignores unjudged", "auc", missed, ranked("z", "b", "y", "a"), 0},
		{"auc@2 only the top 2", "auc@2", graded, ranked("a", "b", "c", "d", "e"), 1},
		{"auc only non-relevant", "auc", none, ranked("a", "b"), 0.5},
		{"auc only relevant", "auc", graded, ranked("a", "c"), 0.5},
		{"auc tie counts half", "auc", map[string]int{"a": 1, "b": 0, "c": 1, "d": 0},
			scored("a", 3.0, "b", 2.0, "c", 2.0, "d", 1.0), (1 + 1 + 0.5 + 1) / 4},
		{"auc all tied", "auc", graded, scored("a", 1.0, "b", 1.0, "c", 1.0, "d", 1.0, "e", 1.0), 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := ParseMetrics(tc.metric)
			if err != nil {
				t.Fatal(err)
			}
			got := score(ms[0], tc.judged, tc.ranked)
			if math.Abs(got-tc.want) > tol {
				t.Errorf("%s = %.15g, want %.15g", tc.metric, got, tc.want)
			}
			// Through a Run: Evaluate sorts by score, which must give the
			// same ranking.
			run := dataset.NewRun()
			for _, e := range tc.ranked {
				run.Add("q", e)
			}
			res, err := Evaluate(dataset.Qrels{"q": tc.judged}, run, ms)
			if err != nil {
				t.Fatal(err)
			}
			if v := res.Value(ms[0].String()); math.Abs(v-tc.want) > tol {
				t.Errorf("Evaluate %s = %.15g, want %.15g", tc.metric, v, tc.want)
			}
		})
	}
}

func TestSortedKeepsGivenOrderOnTies(t *testing.T) {
	run := dataset.NewRun()
	for _, e := range scored("b", 1.0, "a", 2.0, "d", 1.0, "c", 1.0) {
		run.Add("q", e)
	}
	var got []string
	for _, e := range run.Sorted("q") {
		got = append(got, e.DocID)
	}
	if strings.Join(got, " ") != "a b d c" {
		t.Errorf("Sorted = %v, want [a b d c]", got)
	}
	// map@10 follows that order: relevant d at rank 3.
	res, err := Evaluate(dataset.Qrels{"q": {"d": 1}}, run, MustParseMetrics("map@10"))
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Mean[0]; math.Abs(v-1.0/3) > tol {
		t.Errorf("map@10 = %g, want 1/3", v)
	}
}

func TestEvaluateAveragesOverJudgedQueries(t *testing.T) {
	q := dataset.Qrels{
		"q1": {"a": 1, "b": 0, "c": 1},
		"q2": {"a": 0, "b": 0}, // no relevant document: counts, as 0
		"q3": {"x": 1},         // absent from the run: counts, as 0
	}
	run := dataset.NewRun()
	for _, e := range ranked("a", "b", "c") {
		run.Add("q1", e)
	}
	for _, e := range ranked("b", "a") {
		run.Add("q2", e)
	}
	ms := MustParseMetrics("map@10,mrr@10,p@1,auc")
	res, err := Evaluate(q, run, ms)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Queries, ","); got != "q1,q2,q3" {
		t.Fatalf("Queries = %s, want q1,q2,q3", got)
	}
	want := map[string][]float64{
		"q1": {(1 + 2.0/3) / 2, 1, 1, 1.0 / 2}, // auc: (a,b) right, (c,b) wrong
		"q2": {0, 0, 0, 0.5},
		"q3": {0, 0, 0, 0}, // not 0.5: the run ranked nothing
	}
	for qid, w := range want {
		for i := range ms {
			if got := res.PerQuery[qid][i]; math.Abs(got-w[i]) > tol {
				t.Errorf("%s %s = %g, want %g", qid, ms[i], got, w[i])
			}
		}
	}
	for i, m := range ms {
		mean := (want["q1"][i] + want["q2"][i] + want["q3"][i]) / 3
		if got := res.Value(m.String()); math.Abs(got-mean) > tol {
			t.Errorf("mean %s = %g, want %g", m, got, mean)
		}
		col := res.Column(i)
		for j, qid := range res.Queries {
			if col[j] != res.PerQuery[qid][i] {
				t.Errorf("Column(%d)[%d] = %g, want %g", i, j, col[j], res.PerQuery[qid][i])
			}
		}
	}
	if v := res.Value("ndcg@10"); !math.IsNaN(v) {
		t.Errorf("Value of a metric not evaluated = %g, want NaN", v)
	}
}

func TestEvaluateUnknownQuery(t *testing.T) {
	q := dataset.Qrels{"q1": {"a": 1}}
	const text = "q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\nq9 Q0 a 1 1 t\n"
	run, err := dataset.ReadRun(strings.NewReader(text), "runs/x.trec")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Evaluate(q, run, MustParseMetrics("map@10"))
	if err == nil {
		t.Fatal("Evaluate accepted a run naming a query without judgments")
	}
	if !errors.Is(err, dataset.ErrUnknownQuery) || !strings.Contains(err.Error(), "runs/x.trec:3:") || !strings.Contains(err.Error(), `"q9"`) {
		t.Errorf("error %q does not name the file, line 3 and query q9", err)
	}
	// Filtering the query away is the deliberate way to ignore it.
	kept := run.Filter(func(qid string) bool { _, ok := q[qid]; return ok })
	if _, err := Evaluate(q, kept, MustParseMetrics("map@10")); err != nil {
		t.Errorf("filtered run: %v", err)
	}
	// A run built in memory has no file; the error still says "run".
	mem := dataset.NewRun()
	mem.Add("q9", dataset.Entry{DocID: "a", Score: 1})
	if err := mem.CheckQueries(q); err == nil || !strings.HasPrefix(err.Error(), "run:") {
		t.Errorf("in-memory run error = %v, want prefix run:", err)
	}
}

// TestEvaluateRefusesBadEntries checks runs built in memory, which
// ReadRun has not checked: a document listed twice for one query would be
// credited twice (p@2 = 1 with one relevant document, trec AP above 1), and
// a NaN score has no place in a descending order.
func TestEvaluateRefusesBadEntries(t *testing.T) {
	q := dataset.Qrels{"q1": {"a": 1, "b": 0}, "q2": {"a": 1}}
	tests := []struct {
		name    string
		entries map[string][]dataset.Entry
		msg     string
	}{
		{"duplicate", map[string][]dataset.Entry{"q1": {{DocID: "b", Score: 3}, {DocID: "a", Score: 2}, {DocID: "a", Score: 1}}}, `document "a" listed twice for query "q1"`},
		{"duplicate in second query", map[string][]dataset.Entry{"q2": {{DocID: "a", Score: 2}, {DocID: "a", Score: 2}}}, `document "a" listed twice for query "q2"`},
		{"NaN score", map[string][]dataset.Entry{"q1": {{DocID: "a", Score: 1}, {DocID: "b", Score: math.NaN()}}}, `query "q1", document "b": score is NaN`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := dataset.NewRun()
			for _, qid := range dataset.SortedKeys(tc.entries) {
				run.Set(qid, tc.entries[qid])
			}
			_, err := Evaluate(q, run, MustParseMetrics("map,p@2"))
			var pe *dataset.ParseError
			if !errors.As(err, &pe) || pe.File != "run" || pe.Line != 0 || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want a *dataset.ParseError of file run, line 0, containing %q", err, tc.msg)
			}
		})
	}
	// The same document for two queries is fine.
	run := dataset.NewRun()
	run.Add("q1", dataset.Entry{DocID: "a", Score: 1})
	run.Add("q2", dataset.Entry{DocID: "a", Score: 1})
	if _, err := Evaluate(q, run, MustParseMetrics("map")); err != nil {
		t.Errorf("one document for two queries: %v", err)
	}
}

func TestParseMetrics(t *testing.T) {
	good := []struct {
		in   string
		want string
	}{
		{"map@10", "map@10"},
		{"MAP@10, mrr@10 ,auc", "map@10,mrr@10,auc"},
		{"map,ndcg,mrr,ndcg@5,p@1,r@100,auc@10", "map,ndcg,mrr,ndcg@5,p@1,r@100,auc@10"},
		{",map@10,,", "map@10"},
		// trec_eval's names, as it prints them.
		{"ndcg_cut_10,recall_100,map,P_10,recip_rank", "ndcg@10,r@100,map,p@10,mrr"},
	}
	for _, tc := range good {
		ms, err := ParseMetrics(tc.in)
		if err != nil {
			t.Errorf("ParseMetrics(%q): %v", tc.in, err)
			continue
		}
		var names []string
		for _, m := range ms {
			names = append(names, m.String())
		}
		if got := strings.Join(names, ","); got != tc.want {
			t.Errorf("ParseMetrics(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	bad := []struct {
		in, msg string
	}{
		{"", "no metrics"},
		{" , ", "no metrics"},
		{"map@0", "positive integer"},
		{"map@-3", "positive integer"},
		{"map@x", "positive integer"},
		{"map@", "positive integer"},
		{"p", "needs a cutoff"},
		{"r", "needs a cutoff"},
		{"bleu@4", "unknown metric"},
		{"@5", "unknown metric"},
		{"map@10,f1", "unknown metric"},
		{"ndcg_cut_0", "positive integer"},
		{"recall_x", "positive integer"},
		{"map_cut_10", "unknown metric"}, // not map@10: it divides by every relevant document
	}
	for _, tc := range bad {
		_, err := ParseMetrics(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ParseMetrics(%q) error = %v, want one saying %q", tc.in, err, tc.msg)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("MustParseMetrics did not panic on a bad list")
		}
	}()
	MustParseMetrics("nope")
}

// TestTrecEvalNamesScoreAlike: a trec_eval name scores what the metric it
// stands for scores.
func TestTrecEvalNamesScoreAlike(t *testing.T) {
	q := dataset.Qrels{"q1": {"d1": 2, "d3": 1, "d9": 1}, "q2": {"d2": 1}}
	run := dataset.NewRun()
	for i, id := range []string{"d4", "d1", "d2", "d3"} {
		run.Add("q1", dataset.Entry{DocID: id, Score: float64(10 - i)})
		run.Add("q2", dataset.Entry{DocID: id, Score: float64(10 - i)})
	}
	ours, err := Evaluate(q, run, MustParseMetrics("ndcg@3,r@2,map,p@2,mrr"))
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := Evaluate(q, run, MustParseMetrics("ndcg_cut_3,recall_2,map,P_2,recip_rank"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ours.Mean, theirs.Mean) {
		t.Errorf("our names %v, trec_eval's %v", ours.Mean, theirs.Mean)
	}
}

// TestDefaultMetrics: runs of SemEval's 10 candidates a query get SemEval's
// metrics, and a run ranking more for any query BEIR's.
func TestDefaultMetrics(t *testing.T) {
	short, long := dataset.NewRun(), dataset.NewRun()
	for i := range 10 {
		short.Add("q1", dataset.Entry{DocID: fmt.Sprint("d", i), Score: float64(-i)})
		long.Add("q1", dataset.Entry{DocID: fmt.Sprint("d", i), Score: float64(-i)})
	}
	long.Add("q2", dataset.Entry{DocID: "d0", Score: 1})
	for i := range 11 {
		long.Add("q3", dataset.Entry{DocID: fmt.Sprint("d", i), Score: float64(-i)})
	}
	names := func(ms []Metric) string {
		var out []string
		for _, m := range ms {
			out = append(out, m.String())
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		runs []dataset.Run
		want string
	}{
		{[]dataset.Run{short}, "map@10,mrr@10,ndcg@10,p@1,auc"},
		{[]dataset.Run{long}, "ndcg@10,map,r@100"},
		{[]dataset.Run{short, long}, "ndcg@10,map,r@100"},
	} {
		if got := names(DefaultMetrics(tc.runs...)); got != tc.want {
			t.Errorf("DefaultMetrics of %d runs = %s, want %s", len(tc.runs), got, tc.want)
		}
	}
}
