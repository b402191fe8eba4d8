package dataset

import (
	"fmt"
	"reflect"
	"testing"
)

// TestWithUnjudgedNotRelevant: the candidates a judged query's judgments
// leave out count as not relevant, as the metrics count them; queries
// without judgments stay unjudged, and the dataset itself is not changed.
func TestWithUnjudgedNotRelevant(t *testing.T) {
	run := func(lists map[string][]string) *Run {
		r := &Run{}
		for _, qid := range []string{"q1", "q2", "q3"} {
			for i, d := range lists[qid] {
				r.Add(qid, Entry{DocID: d, Score: float64(10 - i), Rank: i + 1})
			}
		}
		return r
	}
	tests := []struct {
		name  string
		qrels Qrels
		lists map[string][]string
		want  Qrels
	}{
		{
			"lists judged whole are kept",
			Qrels{"q1": {"a": 1, "b": 0}},
			map[string][]string{"q1": {"a", "b"}},
			Qrels{"q1": {"a": 1, "b": 0}},
		},
		{
			"relevant-only judgments are completed",
			Qrels{"q1": {"a": 1}, "q2": {"c": 2}},
			map[string][]string{"q1": {"b", "a", "d"}, "q2": {"c", "a"}, "q3": {"a", "b"}},
			Qrels{"q1": {"a": 1, "b": 0, "d": 0}, "q2": {"c": 2, "a": 0}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := fmt.Sprint(tc.qrels)
			ds := &Dataset{Qrels: tc.qrels, Candidates: run(tc.lists)}
			got := ds.WithUnjudgedNotRelevant()
			if tc.name == "lists judged whole are kept" && got != ds {
				t.Error("a dataset judged whole was copied")
			}
			if !reflect.DeepEqual(got.Qrels, tc.want) {
				t.Errorf("judgments %v, want %v", got.Qrels, tc.want)
			}
			if fmt.Sprint(tc.qrels) != before {
				t.Errorf("the dataset's own judgments changed: %v, were %s", tc.qrels, before)
			}
			if _, ok := got.Qrels["q3"]; ok {
				t.Error("a query without judgments was judged")
			}
		})
	}
}
