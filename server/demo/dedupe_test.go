package demo

import (
	"reflect"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// TestDedupe: repeated documents are dropped for the first of their ids,
// and the judgments and candidate lists that named them name it.
func TestDedupe(t *testing.T) {
	cands := dataset.NewRun()
	for i, id := range []string{"a2", "b", "a1"} {
		cands.Add("q1", dataset.Entry{DocID: id, Score: float64(3 - i), Rank: i + 1})
	}
	cands.Add("q2", dataset.Entry{DocID: "a3", Score: 1, Rank: 1})
	ds := &dataset.Dataset{
		Corpus: []dataset.Doc{
			{ID: "a1", Title: "Visa", Text: "How long?"},
			{ID: "b", Title: "Visa", Text: "How short?"},
			{ID: "a2", Title: "Visa", Text: "How long?"},
			{ID: "a3", Title: "Visa", Text: "How long?"},
		},
		Queries:    []dataset.Query{{ID: "q1", Text: "visa"}, {ID: "q2", Text: "visa"}},
		Qrels:      dataset.Qrels{"q1": {"a2": 2, "a1": 0, "b": 0}, "q2": {"a3": 1}},
		Candidates: &cands,
	}
	got, dropped := dedupe(ds)
	if dropped != 2 || len(got.Corpus) != 2 || got.Corpus[0].ID != "a1" || got.Corpus[1].ID != "b" {
		t.Fatalf("dropped %d, corpus %+v", dropped, got.Corpus)
	}
	if want := (dataset.Qrels{"q1": {"a1": 2, "b": 0}, "q2": {"a1": 1}}); !reflect.DeepEqual(got.Qrels, want) {
		t.Errorf("judgments %v, want %v", got.Qrels, want)
	}
	var ids []string
	for _, e := range got.Candidates.Ranking("q1") {
		ids = append(ids, e.DocID)
	}
	if !reflect.DeepEqual(ids, []string{"a1", "b"}) || got.Candidates.Ranking("q2")[0].DocID != "a1" {
		t.Errorf("candidates of q1 %v, of q2 %v", ids, got.Candidates.Ranking("q2"))
	}
	if len(ds.Corpus) != 4 || ds.Qrels["q2"]["a3"] != 1 || len(ds.Candidates.Ranking("q1")) != 3 {
		t.Error("dedupe changed its input")
	}
	if same, n := dedupe(got); same != got || n != 0 {
		t.Errorf("a corpus without repeats: dropped %d", n)
	}
}
