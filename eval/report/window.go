package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
)

// windowRun returns what reranking only the top k of base would give if
// the reranker ordered those k candidates as reranked orders them: for
// each query of base, its top k in reranked's order (any that reranked
// does not rank after them, in base's order), then the rest of base in
// base's order. Scores are synthetic and strictly decreasing.
//
// It is exact for rerankers whose score for a candidate does not depend on
// the other candidates in the window; semrank's linear fusion normalises
// its features per window, so a real k-window ranks slightly differently.
func windowRun(base, reranked dataset.Run, k int) dataset.Run {
	out := dataset.NewRun()
	for _, qid := range base.QueryIDs() {
		order := map[string]int{}
		for i, e := range reranked.Sorted(qid) {
			order[e.DocID] = i
		}
		pos := func(e dataset.Entry) int {
			if i, ok := order[e.DocID]; ok {
				return i
			}
			return math.MaxInt
		}
		es := base.Sorted(qid)
		top := slices.Clone(es[:min(k, len(es))])
		slices.SortStableFunc(top, func(a, b dataset.Entry) int { return pos(a) - pos(b) })
		for i, e := range append(top, es[len(top):]...) {
			out.Add(qid, dataset.Entry{DocID: e.DocID, Score: float64(len(es) - i)})
		}
	}
	return out
}

// windowPoints returns metric m of windowRun(base, reranked, k) for each
// distinct window k in increasing order.
func windowPoints(qrels dataset.Qrels, base, reranked dataset.Run, m eval.Metric, windows []int) (plotter.XYs, error) {
	ks := slices.Compact(slices.Sorted(slices.Values(windows)))
	pts := make(plotter.XYs, 0, len(ks))
	for _, k := range ks {
		res, err := eval.Evaluate(qrels, windowRun(base, reranked, k), []eval.Metric{m})
		if err != nil {
			return nil, err
		}
		pts = append(pts, plotter.XY{X: float64(k), Y: res.Mean[0]})
	}
	return pts, nil
}

// windowPlot plots metric m of each run after the first against the size
// of the rerank window: windows[i] holds run i+1's points (windowPoints).
func windowPlot(path string, runs []Named, m eval.Metric, windows []plotter.XYs) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s by rerank window (%s's top k reordered)", m, runs[0].Name)
	p.X.Label.Text = "window k"
	p.Y.Label.Text = m.String()
	var lines []any
	for i, r := range runs[1:] {
		lines = append(lines, r.Name, windows[i])
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	return saveLogX(p, path)
}

// writeWindows writes the window plot's values as a markdown table: a row
// per window size, a column per run after the first.
func writeWindows(w io.Writer, runs []Named, windows []plotter.XYs) {
	fmt.Fprint(w, "| window k |")
	for _, r := range runs[1:] {
		fmt.Fprintf(w, " %s |", strings.ReplaceAll(r.Name, "|", `\|`))
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(runs)-1))
	if len(windows) == 0 {
		return
	}
	for j := range windows[0] {
		fmt.Fprintf(w, "| %g |", windows[0][j].X)
		for _, pts := range windows {
			fmt.Fprintf(w, " %.4f |", pts[j].Y)
		}
		fmt.Fprintln(w)
	}
}
