// Package report turns evaluated runs into a markdown table and plots
// (gonum/plot): per-query AP change against a baseline, each run's metric
// as a function of the ranking depth it is cut to, and each reranked run's
// metric as a function of the rerank window, the number of the baseline's
// top candidates it reorders.
package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/internal/atomicfile"
)

// Named is a run with the name it is reported under.
type Named struct {
	Name string
	Run  dataset.Run
}

// Options configure Write.
type Options struct {
	Metrics []eval.Metric // table columns; the first is tested for significance
	Format  string        // plot format: "png" or "svg"
	Depths  []int         // cutoffs (1 or more, any order) for the depth plot, and window sizes for the window plot; 1..10, 20, 50, 100 when empty
}

// Write evaluates runs (the first is the baseline) against qrels and
// writes dir/report.md, dir/depth.<fmt>, and with two runs or more
// dir/ap-change.<fmt> and dir/window.<fmt> (the first metric by rerank
// window size; see windowRun). Depths are both the depth plot's cutoffs
// and the window plot's window sizes.
func Write(dir string, qrels dataset.Qrels, runs []Named, o Options) error {
	if len(runs) == 0 {
		return fmt.Errorf("report: no runs")
	}
	if o.Format == "" {
		o.Format = "png"
	}
	if o.Format != "png" && o.Format != "svg" {
		return fmt.Errorf("report: unknown plot format %q (png, svg)", o.Format)
	}
	if len(o.Metrics) == 0 {
		o.Metrics = eval.MustParseMetrics("map@10,map,mrr@10,ndcg@10,p@1,auc")
	}
	metrics, note := eval.DefinedMetrics(qrels, o.Metrics)
	if len(metrics) == 0 {
		return fmt.Errorf("report: no metric to report: %s", note)
	}
	var notes []string
	if note != "" {
		notes = append(notes, note)
	}
	for _, r := range runs {
		if n := qrels.UnrankedNote(r.Run, r.Name); n != "" {
			notes = append(notes, n)
		}
	}
	o.Metrics = metrics
	if len(o.Depths) == 0 {
		o.Depths = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 50, 100}
	}
	for _, k := range o.Depths {
		// A cutoff of 0 would mean the whole ranking, and has no place
		// on the plot's log axis.
		if k < 1 {
			return fmt.Errorf("report: depth %d: depths must be 1 or more", k)
		}
	}
	results := make([]eval.Result, len(runs))
	for i, r := range runs {
		res, err := eval.Evaluate(qrels, r.Run, o.Metrics)
		if err != nil {
			return fmt.Errorf("report: run %s: %w", r.Name, err)
		}
		results[i] = res
	}
	var windows []plotter.XYs // per run after the first
	for _, r := range runs[min(1, len(runs)):] {
		pts, err := windowPoints(qrels, runs[0].Run, r.Run, o.Metrics[0], o.Depths)
		if err != nil {
			return fmt.Errorf("report: run %s: %w", r.Name, err)
		}
		windows = append(windows, pts)
	}
	// Only now: a run that fails to evaluate leaves no directory behind.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The plots first, each written whole, and report.md, which links
	// them, last: a report that fails part way leaves the earlier
	// report.md as it was, not one describing plots that were never drawn.
	apPath := filepath.Join(dir, "ap-change."+o.Format)
	if len(runs) < 2 {
		// Nothing to compare with the baseline: no plot, and none left
		// from an earlier report in dir.
		if err := os.Remove(apPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	} else if err := apChange(apPath, runs, results); err != nil {
		return err
	}
	winPath := filepath.Join(dir, "window."+o.Format)
	if len(runs) < 2 {
		if err := os.Remove(winPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	} else if err := windowPlot(winPath, runs, o.Metrics[0], windows); err != nil {
		return err
	}
	if err := depthPlot(filepath.Join(dir, "depth."+o.Format), qrels, runs, o.Metrics[0], o.Depths); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, "report.md"), func(w io.Writer) error {
		return table(w, runs, results, o.Metrics, o.Format, notes, windows)
	})
}

// save writes p to path whole (atomicfile), in the format path's extension
// names, as p.Save does.
func save(p *plot.Plot, path string) error {
	wt, err := p.WriterTo(8*vg.Inch, 5*vg.Inch, strings.TrimPrefix(filepath.Ext(path), "."))
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := wt.WriteTo(w)
		return err
	})
}

// table writes the markdown table of the runs' results, then the notes,
// then the plots' links, with the window plot's values as a table.
func table(w io.Writer, runs []Named, results []eval.Result, metrics []eval.Metric, format string, notes []string, windows []plotter.XYs) error {
	var names []string
	for _, m := range metrics {
		names = append(names, m.String())
	}
	fmt.Fprintf(w, "# Evaluation report\n\n%d judged queries; baseline: %s. p-values: paired t-test / randomization test on %s.\n\n", len(results[0].Queries), runs[0].Name, metrics[0])
	fmt.Fprintf(w, "| run | %s | Δ %s | p (t / rand.) | wins/losses |\n|---|%s---|---|---|\n", strings.Join(names, " | "), metrics[0], strings.Repeat("---|", len(names)))
	for i, r := range runs {
		// A "|" in a name would end its cell and shift the row.
		cells := []string{strings.ReplaceAll(r.Name, "|", `\|`)}
		for _, v := range results[i].Mean {
			cells = append(cells, fmt.Sprintf("%.4f", v))
		}
		if i == 0 {
			cells = append(cells, "—", "—", "—")
		} else {
			c, err := eval.Compare(results[i].Column(0), results[0].Column(0))
			if err != nil {
				return err
			}
			cells = append(cells, fmt.Sprintf("%+.4f", c.Delta), fmt.Sprintf("%.4f / %.4f", c.PTTest, c.PRandom), fmt.Sprintf("%d/%d", c.Improved, c.Hurt))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	for _, n := range notes {
		fmt.Fprintf(w, "\nNote: %s.\n", n)
	}
	if len(runs) > 1 {
		fmt.Fprintf(w, "\n![per-query change](ap-change.%s)\n", format)
		fmt.Fprintf(w, "\n%s by rerank window k: %s with only its top k reordered as each run orders them (exact for rerankers that score each candidate on its own; a fusion normalising per window ranks slightly differently).\n\n![metric by rerank window](window.%s)\n\n", metrics[0], runs[0].Name, format)
		writeWindows(w, runs, windows)
	}
	fmt.Fprintf(w, "\n![metric by depth](depth.%s)\n", format)
	return nil
}

// apChange plots, for each non-baseline run, the per-query change of the
// first metric against the baseline, queries sorted by change.
func apChange(path string, runs []Named, results []eval.Result) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Per-query %s change vs %s", results[0].Metrics[0], runs[0].Name)
	p.X.Label.Text = "queries, sorted by change"
	p.Y.Label.Text = "Δ " + results[0].Metrics[0].String()
	base := results[0].Column(0)
	var lines []any
	for i := 1; i < len(runs); i++ {
		col := results[i].Column(0)
		d := make([]float64, len(col))
		for j := range col {
			d[j] = col[j] - base[j]
		}
		sort.Float64s(d)
		pts := make(plotter.XYs, len(d))
		for j, v := range d {
			pts[j].X, pts[j].Y = float64(j), v
		}
		lines = append(lines, runs[i].Name, pts)
	}
	if len(lines) == 0 {
		return nil
	}
	add := plotutil.AddLines
	if len(base) < 2 {
		// A line through one point draws nothing: mark the point.
		add = plotutil.AddLinePoints
	}
	if err := add(p, lines...); err != nil {
		return err
	}
	return save(p, path)
}

// depthPlot plots metric m with each run cut to depth k, for every k: how
// much of a run's quality sits in its top k, the window a reranker sees.
func depthPlot(path string, qrels dataset.Qrels, runs []Named, m eval.Metric, depths []int) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s by ranking depth", m.Name)
	p.X.Label.Text = "depth k (run cut to its top k)"
	p.Y.Label.Text = m.Name + "@k"
	if m.Name == "map" && m.K == 0 {
		p.Y.Label.Text = "map of the top k (trec_eval map_cut)" // map@k is SemEval's AP
	}
	var lines []any
	for _, r := range runs {
		pts, err := depthPoints(qrels, r.Run, m, depths)
		if err != nil {
			return err
		}
		lines = append(lines, r.Name, pts)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	return saveLogX(p, path)
}

// saveLogX saves p to path with a log-scaled x axis: depths and window
// sizes run from 1 to 100, most of them at the low end.
func saveLogX(p *plot.Plot, path string) error {
	if p.X.Min == p.X.Max {
		// One point: gonum would widen the range by 1 on each side, to 0
		// for depth 1, which a log scale cannot place.
		p.X.Min, p.X.Max = p.X.Min/2, p.X.Max*2
	}
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	return save(p, path)
}

// depthPoints returns metric m of run cut to each depth, one point per
// distinct depth in increasing order, so the line through them runs left
// to right whatever order the depths were given in. depths is not changed.
//
// A metric cut to depth k is m with cutoff k, except trec_eval's MAP (map
// without a cutoff): map@k is the SemEval scorer's AP, which divides by
// the relevant documents found in the top k rather than by all relevant
// ones, so it would plot another measure than the table's map (and not
// meet it at full depth). That one is scored as map over the run cut to
// its top k, as trec_eval's map_cut.
func depthPoints(qrels dataset.Qrels, run dataset.Run, m eval.Metric, depths []int) (plotter.XYs, error) {
	ks := slices.Compact(slices.Sorted(slices.Values(depths)))
	pts := make(plotter.XYs, 0, len(ks))
	for _, k := range ks {
		mk, r := eval.Metric{Name: m.Name, K: k}, run
		if m.Name == "map" && m.K == 0 {
			mk, r = m, cutRun(run, k)
		}
		res, err := eval.Evaluate(qrels, r, []eval.Metric{mk})
		if err != nil {
			return nil, err
		}
		pts = append(pts, plotter.XY{X: float64(k), Y: res.Mean[0]})
	}
	return pts, nil
}

// cutRun returns run with each query's ranking cut to its top k, in the
// order Sorted gives (ties in the order given).
func cutRun(run dataset.Run, k int) dataset.Run {
	out := dataset.NewRun()
	out.File = run.File
	for _, qid := range run.QueryIDs() {
		es := run.Sorted(qid)
		out.Set(qid, es[:min(k, len(es))])
	}
	return out
}
