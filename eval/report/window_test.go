package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
)

// ranked returns a run of one query "q" ranking ids in order.
func ranked(ids ...string) dataset.Run {
	r := dataset.NewRun()
	for i, id := range ids {
		r.Add("q", dataset.Entry{DocID: id, Score: float64(len(ids) - i)})
	}
	return r
}

func TestWindowRun(t *testing.T) {
	base := ranked("a", "b", "c", "d", "e")
	tests := []struct {
		name     string
		reranked dataset.Run
		k        int
		want     []string
	}{
		{"window 1 changes nothing", ranked("c", "b", "a"), 1, []string{"a", "b", "c", "d", "e"}},
		{"window 3 reorders the top 3", ranked("c", "b", "a", "e", "d"), 3, []string{"c", "b", "a", "d", "e"}},
		{"a window past the list reorders all", ranked("e", "d", "c", "b", "a"), 10, []string{"e", "d", "c", "b", "a"}},
		{"what the reranker lacks keeps base's order after it", ranked("c", "a"), 4, []string{"c", "a", "b", "d", "e"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range windowRun(base, tc.reranked, tc.k).Sorted("q") {
				got = append(got, e.DocID)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWindowPoints: the relevant document sits at the baseline's rank 3 and
// the reranker puts it first, so AP is the baseline's 1/3 for windows 1
// and 2 and 1 from window 3 on.
func TestWindowPoints(t *testing.T) {
	q := dataset.Qrels{}
	q.Add("q", "c", 1)
	q.Add("q", "a", 0)
	pts, err := windowPoints(q, ranked("a", "b", "c", "d"), ranked("c", "a", "b", "d"), eval.MustParseMetrics("map@10")[0], []int{3, 1, 2, 10, 3})
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]float64{{1, 1.0 / 3}, {2, 1.0 / 3}, {3, 1}, {10, 1}}
	if len(pts) != len(want) {
		t.Fatalf("%d points, want %d: %v", len(pts), len(want), pts)
	}
	for i, w := range want {
		if pts[i].X != w[0] || math.Abs(pts[i].Y-w[1]) > 1e-12 {
			t.Errorf("point %d = (%v, %v), want (%v, %v)", i, pts[i].X, pts[i].Y, w[0], w[1])
		}
	}
}

// TestWriteWindowPlot: with two runs the report links and writes the
// window plot; a later report of the baseline alone removes it.
func TestWriteWindowPlot(t *testing.T) {
	q, base, better := judgedRuns("q1", "q2")
	dir := t.TempDir()
	o := Options{Format: "svg", Metrics: eval.MustParseMetrics("map@10")}
	if err := Write(dir, q, []Named{{"bm25", base}, {"reranked", better}}, o); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	// judgedRuns: "better" ranks each query's relevant document first,
	// "bm25" second, so a window of 1 changes nothing and one of 2 all.
	if !strings.Contains(string(md), "| window k | reranked |\n|---|---|\n| 1 | 0.5000 |\n| 2 | 1.0000 |") {
		t.Errorf("report.md lacks the window table:\n%s", md)
	}
	if st, err := os.Stat(filepath.Join(dir, "window.svg")); err != nil || st.Size() == 0 || !strings.Contains(string(md), "(window.svg)") {
		t.Errorf("window plot: %v; report.md:\n%s", err, md)
	}
	if err := Write(dir, q, []Named{{"bm25", base}}, o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "window.svg")); !os.IsNotExist(err) {
		t.Errorf("window.svg left from the earlier report: %v", err)
	}
}
