package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/eval"
)

// judgedRuns returns judgments with one relevant and one non-relevant
// document per query, a run ranking the non-relevant one first and a run
// ranking the relevant one first.
func judgedRuns(qids ...string) (q eval.Qrels, worse, better eval.Run) {
	q, worse, better = eval.Qrels{}, eval.NewRun(), eval.NewRun()
	for _, qid := range qids {
		q.Add(qid, qid+"-rel", 1)
		q.Add(qid, qid+"-non", 0)
		worse.Add(qid, eval.Entry{DocID: qid + "-non", Score: 2})
		worse.Add(qid, eval.Entry{DocID: qid + "-rel", Score: 1})
		better.Add(qid, eval.Entry{DocID: qid + "-rel", Score: 2})
		better.Add(qid, eval.Entry{DocID: qid + "-non", Score: 1})
	}
	return q, worse, better
}

func TestWrite(t *testing.T) {
	q, base, better := judgedRuns("q1", "q2", "q3")
	dir := t.TempDir()
	for _, format := range []string{"png", "svg"} {
		err := Write(dir, q, []Named{{"bm25", base}, {"reranked", better}}, Options{Format: format, Metrics: eval.MustParseMetrics("map@10,mrr@10")})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"report.md", "ap-change." + format, "depth." + format} {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), "| reranked | 1.0000 | 1.0000 | +0.5000 |") {
		t.Errorf("report.md:\n%s", md)
	}
	if err := Write(dir, q, nil, Options{}); err == nil {
		t.Error("no runs accepted")
	}
	if err := Write(dir, q, []Named{{"b", base}}, Options{Format: "gif"}); err == nil {
		t.Error("unknown format accepted")
	}
}

// TestWriteOneRun checks that a report of the baseline alone neither links
// a per-query change plot nor leaves one from an earlier report in dir.
func TestWriteOneRun(t *testing.T) {
	q, other, base := judgedRuns("q1", "q2")
	dir := t.TempDir()
	o := Options{Format: "svg", Metrics: eval.MustParseMetrics("map@10")}
	if err := Write(dir, q, []Named{{"a", base}, {"b", other}}, o); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, q, []Named{{"a", base}}, o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ap-change.svg")); !os.IsNotExist(err) {
		t.Errorf("ap-change.svg left from the earlier report: %v", err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if strings.Contains(string(md), "ap-change") || !strings.Contains(string(md), "depth.svg") {
		t.Errorf("report.md:\n%s", md)
	}
}
