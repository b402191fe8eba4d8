package eval

import (
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// FuzzEvaluate: a run that reads (dataset.ReadRun) scores without error
// against judgments that know its queries.
func FuzzEvaluate(f *testing.F) {
	f.Add("q1 Q0 d1 1 0.5 run\nq1 Q0 d2 2 0.25 run\n")
	f.Add("q1 Q0 d1 1 +Inf run\r\n\nq2 Q0 d1 1 -0 run\n")
	f.Add("q1 Q0 d1 1 NaN run\n")
	f.Add("Q268\tQ268_R4\t0\t0.25\ttrue\nQ269\tQ269_R1\t3\t-Inf\tfalse\n")
	f.Fuzz(func(t *testing.T, in string) {
		run, err := dataset.ReadRun(strings.NewReader(in), "r.trec")
		if err != nil {
			return // dataset's FuzzReadRun checks the errors
		}
		q := dataset.Qrels{}
		for _, qid := range run.QueryIDs() {
			for _, e := range run.Ranking(qid) {
				q.Add(qid, e.DocID, len(e.DocID)%3)
			}
		}
		if _, err := Evaluate(q, run, MustParseMetrics("map@10,map,mrr@10,ndcg@10,p@5,r@5,auc")); err != nil {
			t.Fatal(err)
		}
	})
}
