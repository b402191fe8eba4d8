package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
)

// judgedRuns returns judgments with one relevant and one non-relevant
// document per query, a run ranking the non-relevant one first and a run
// ranking the relevant one first.
func judgedRuns(qids ...string) (q dataset.Qrels, worse, better dataset.Run) {
	q, worse, better = dataset.Qrels{}, dataset.NewRun(), dataset.NewRun()
	for _, qid := range qids {
		q.Add(qid, qid+"-rel", 1)
		q.Add(qid, qid+"-non", 0)
		worse.Add(qid, dataset.Entry{DocID: qid + "-non", Score: 2})
		worse.Add(qid, dataset.Entry{DocID: qid + "-rel", Score: 1})
		better.Add(qid, dataset.Entry{DocID: qid + "-rel", Score: 2})
		better.Add(qid, dataset.Entry{DocID: qid + "-non", Score: 1})
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

// TestWriteDepths checks the depth plot's cutoffs: a single depth (whose
// log axis gonum would widen to 0) and an empty list (the defaults) plot,
// and a cutoff below 1, which has no place on a log axis, is an error.
func TestWriteDepths(t *testing.T) {
	q, base, better := judgedRuns("q1", "q2", "q3")
	runs := []Named{{"bm25", base}, {"reranked", better}}
	tests := []struct {
		name   string
		depths []int
		msg    string // "" for no error
	}{
		{"one depth", []int{1}, ""},
		{"one depth twice", []int{5, 5}, ""},
		{"empty", []int{}, ""},
		{"zero", []int{0, 1, 10}, "depth 0"},
		{"negative", []int{10, -3}, "depth -3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
					}
				}()
				return Write(dir, q, runs, Options{Format: "svg", Depths: tc.depths})
			}()
			if tc.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				if st, err := os.Stat(filepath.Join(dir, "depth.svg")); err != nil || st.Size() == 0 {
					t.Errorf("depth.svg: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.msg) || strings.HasPrefix(err.Error(), "panic") {
				t.Errorf("error = %v, want one saying %q", err, tc.msg)
			}
		})
	}
}

// TestWriteEscapesRunNames checks that a run name holding the markdown
// cell separator does not split its row of the table.
func TestWriteEscapesRunNames(t *testing.T) {
	q, base, better := judgedRuns("q1", "q2")
	dir := t.TempDir()
	o := Options{Format: "svg", Metrics: eval.MustParseMetrics("map@10")}
	if err := Write(dir, q, []Named{{"bm25", base}, {"bm25|rm3", better}}, o); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), `| bm25\|rm3 | 1.0000 |`) {
		t.Errorf("report.md:\n%s", md)
	}
}

// TestWriteOneQuery checks that the per-query change plot of a single
// judged query shows its one point: a line through one point draws nothing.
func TestWriteOneQuery(t *testing.T) {
	arc := regexp.MustCompile(`<path d="M[^"]*A`) // a glyph; lines and axes have no arcs
	for _, qids := range [][]string{{"q1"}, {"q1", "q2"}} {
		q, base, better := judgedRuns(qids...)
		dir := t.TempDir()
		if err := Write(dir, q, []Named{{"a", base}, {"b", better}}, Options{Format: "svg"}); err != nil {
			t.Fatal(err)
		}
		svg, err := os.ReadFile(filepath.Join(dir, "ap-change.svg"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := arc.Match(svg), len(qids) == 1; got != want {
			t.Errorf("%d queries: ap-change.svg has point markers %v, want %v", len(qids), got, want)
		}
	}
}

// TestDepthPoints checks that the depth plot's points run left to right,
// once per depth, whatever order the depths were given in: a line through
// them in the given order would double back.
func TestDepthPoints(t *testing.T) {
	q, base, _ := judgedRuns("q1", "q2")
	m := eval.MustParseMetrics("map@10")[0]
	tests := []struct {
		depths []int
		want   []float64
	}{
		{[]int{1, 2, 10}, []float64{1, 2, 10}},
		{[]int{10, 1, 5}, []float64{1, 5, 10}},
		{[]int{5, 5}, []float64{5}},
		{[]int{3, 1, 3, 2, 1}, []float64{1, 2, 3}},
	}
	for _, tc := range tests {
		depths := append([]int(nil), tc.depths...)
		pts, err := depthPoints(q, base, m, depths)
		if err != nil {
			t.Fatal(err)
		}
		var xs []float64
		for _, p := range pts {
			xs = append(xs, p.X)
		}
		if fmt.Sprint(xs) != fmt.Sprint(tc.want) {
			t.Errorf("depths %v: points at %v, want %v", tc.depths, xs, tc.want)
		}
		if fmt.Sprint(depths) != fmt.Sprint(tc.depths) {
			t.Errorf("depths %v changed to %v", tc.depths, depths)
		}
	}
}

// TestDepthPointsMatchTable checks that the depth plot cuts the table's
// metric and not another one: at a depth no ranking reaches, a metric
// without a cutoff reads as in the table, and one with a cutoff reads as
// in the table at its own cutoff. trec_eval's map once plotted SemEval's
// map@k (AP over the relevant documents found in the top k), 1 here where
// the table says 1/3.
func TestDepthPointsMatchTable(t *testing.T) {
	q := dataset.Qrels{}
	for _, d := range []string{"a", "b", "c"} {
		q.Add("q1", d, 1)
	}
	q.Add("q1", "x", 0)
	run := dataset.NewRun()
	run.Add("q1", dataset.Entry{DocID: "a", Score: 3})
	run.Add("q1", dataset.Entry{DocID: "x", Score: 2})
	run.Add("q1", dataset.Entry{DocID: "y", Score: 1})
	tests := []struct {
		metric string
		depth  int
	}{
		{"map", 100},
		{"map", 3},
		{"mrr", 100},
		{"ndcg", 100},
		{"auc", 100},
		{"map@10", 10},
		{"ndcg@2", 2},
		{"p@1", 1},
	}
	for _, tc := range tests {
		m := eval.MustParseMetrics(tc.metric)[0]
		res, err := eval.Evaluate(q, run, []eval.Metric{m})
		if err != nil {
			t.Fatal(err)
		}
		pts, err := depthPoints(q, run, m, []int{1, tc.depth})
		if err != nil {
			t.Fatal(err)
		}
		if got := pts[len(pts)-1].Y; math.Abs(got-res.Mean[0]) > 1e-12 {
			t.Errorf("%s at depth %d: %v, table %v", tc.metric, tc.depth, got, res.Mean[0])
		}
	}
	// map at depth 1: AP over the top 1 divided by all 3 relevant.
	pts, err := depthPoints(q, run, eval.MustParseMetrics("map")[0], []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if got := pts[0].Y; math.Abs(got-1.0/3) > 1e-12 {
		t.Errorf("map at depth 1: %v, want 1/3", got)
	}
}

// TestWriteLeavesOutUndefinedAUC checks that a report over judgments with
// no non-relevant document (as CACM's) drops AUC, which would read 0.5 for
// every run, and says why; with both kinds judged AUC stays.
func TestWriteLeavesOutUndefinedAUC(t *testing.T) {
	q, worse, better := judgedRuns("q1", "q2")
	onlyRel := dataset.Qrels{}
	for _, qid := range []string{"q1", "q2"} {
		onlyRel.Add(qid, qid+"-rel", 1)
	}
	tests := []struct {
		name    string
		qrels   dataset.Qrels
		metrics string
		wantAUC bool
		wantErr bool
	}{
		{"both kinds judged", q, "map@10,auc", true, false},
		{"only relevant judged", onlyRel, "map@10,auc", false, false},
		{"only auc asked, only relevant judged", onlyRel, "auc", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			err := Write(dir, tc.qrels, []Named{{"a", worse}, {"b", better}}, Options{Format: "svg", Metrics: eval.MustParseMetrics(tc.metrics)})
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
			if got := strings.Contains(string(md), "| auc |"); got != tc.wantAUC {
				t.Errorf("auc column present = %v, want %v:\n%s", got, tc.wantAUC, md)
			}
			if got := strings.Contains(string(md), "Note: auc left out"); got == tc.wantAUC {
				t.Errorf("note present = %v, want %v:\n%s", got, !tc.wantAUC, md)
			}
		})
	}
}

// TestWriteBadRunWritesNothing: a run naming a query the judgments lack
// fails to evaluate, and the report's directory is not created.
func TestWriteBadRunWritesNothing(t *testing.T) {
	q, base, _ := judgedRuns("q1")
	stray := dataset.NewRun()
	stray.Add("q9", dataset.Entry{DocID: "d", Score: 1})
	dir := filepath.Join(t.TempDir(), "report")
	if err := Write(dir, q, []Named{{"a", base}, {"stray", stray}}, Options{Metrics: eval.MustParseMetrics("map@10")}); err == nil {
		t.Fatal("a run with an unjudged query was accepted")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("report directory created: %v", err)
	}
}

// TestWriteFailureKeepsEarlierReport checks that a report whose plot
// cannot be written fails without replacing the earlier report.md, which
// would then describe runs and link plots from two different reports.
func TestWriteFailureKeepsEarlierReport(t *testing.T) {
	q, worse, better := judgedRuns("q1", "q2")
	tests := []struct {
		name    string
		blocked string // a plot path made a non-empty directory before the second report
	}{
		{"ap-change", "ap-change.svg"},
		{"window", "window.svg"},
		{"depth", "depth.svg"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := Options{Format: "svg", Metrics: eval.MustParseMetrics("map@10")}
			if err := Write(dir, q, []Named{{"first", worse}, {"second", better}}, o); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(filepath.Join(dir, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			blocked := filepath.Join(dir, tc.blocked)
			if err := os.Remove(blocked); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := Write(dir, q, []Named{{"other", better}, {"another", worse}}, o); err == nil {
				t.Fatal("no error with a plot path that is a directory")
			}
			after, _ := os.ReadFile(filepath.Join(dir, "report.md"))
			if !bytes.Equal(before, after) {
				t.Errorf("report.md replaced by a report that failed:\n%s", after)
			}
			if tmp, _ := filepath.Glob(filepath.Join(dir, ".*tmp-*")); len(tmp) > 0 {
				t.Errorf("temporary files left: %v", tmp)
			}
		})
	}
}
