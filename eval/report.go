package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/semrank/semrank/dataset"
)

// Report is a Result, optionally compared with a baseline, in a form that
// prints as a table or marshals as JSON.
type Report struct {
	Result   Result
	Baseline *Result
	Tests    []Comparison // one per metric when Baseline is set
	Notes    []string     // what the report leaves out and why, one line each
}

// NewReport evaluates run (and baseline, when not nil) against qrels,
// leaving out with a note the metrics DefinedMetrics drops.
func NewReport(q dataset.Qrels, run dataset.Run, baseline *dataset.Run, metrics []Metric) (*Report, error) {
	rep := &Report{}
	metrics, note := DefinedMetrics(q, metrics)
	if note != "" {
		if len(metrics) == 0 {
			return nil, fmt.Errorf("no metric to report: %s", note)
		}
		rep.Notes = append(rep.Notes, note)
	}
	res, err := Evaluate(q, run, metrics)
	if err != nil {
		return nil, err
	}
	rep.Result = res
	if baseline != nil {
		b, err := Evaluate(q, *baseline, metrics)
		if err != nil {
			return nil, err
		}
		rep.Baseline = &b
		for i := range metrics {
			c, err := Compare(res.Column(i), b.Column(i))
			if err != nil {
				return nil, err
			}
			rep.Tests = append(rep.Tests, c)
		}
	}
	return rep, nil
}

// DefinedMetrics returns metrics without AUC when q judges no document
// not relevant (see Qrels.JudgesNonRelevant), and a note saying why: AUC
// would be 0.5 for every query a run ranks (0 for the others) whatever
// the ranking, which reads as a measurement but is not one.
// Otherwise it returns metrics and "".
func DefinedMetrics(q dataset.Qrels, metrics []Metric) ([]Metric, string) {
	if q.JudgesNonRelevant() {
		return metrics, ""
	}
	kept := slices.DeleteFunc(slices.Clone(metrics), func(m Metric) bool { return m.Name == "auc" })
	if len(kept) == len(metrics) {
		return metrics, ""
	}
	return kept, "auc left out: the judgments mark no document not relevant, so it would be 0.5 for every ranked query whatever the ranking"
}

// WriteText prints the report as an aligned table; perQuery adds one row
// per query.
func (r *Report) WriteText(w io.Writer, perQuery bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if perQuery {
		fmt.Fprint(tw, "query")
		for _, m := range r.Result.Metrics {
			fmt.Fprintf(tw, "\t%s", m)
		}
		fmt.Fprintln(tw)
		for _, q := range r.Result.Queries {
			fmt.Fprint(tw, q)
			for _, v := range r.Result.PerQuery[q] {
				fmt.Fprintf(tw, "\t%.4f", v)
			}
			fmt.Fprintln(tw)
		}
		fmt.Fprintln(tw)
	}
	if r.Baseline == nil {
		fmt.Fprintf(tw, "metric\tvalue\t(queries: %d)\n", len(r.Result.Queries))
		for i, m := range r.Result.Metrics {
			fmt.Fprintf(tw, "%s\t%.4f\n", m, r.Result.Mean[i])
		}
	} else {
		fmt.Fprintf(tw, "metric\trun\tbaseline\tdelta\tp(t-test)\tp(randomization)\twins/losses\t(queries: %d)\n", len(r.Result.Queries))
		for i, m := range r.Result.Metrics {
			c := r.Tests[i]
			fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%+.4f\t%.4f\t%.4f\t%d/%d\n", m, c.MeanA, c.MeanB, c.Delta, c.PTTest, c.PRandom, c.Improved, c.Hurt)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range r.Notes {
		if _, err := fmt.Fprintln(w, "note:", n); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes the report as JSON.
func (r *Report) WriteJSON(w io.Writer, perQuery bool) error {
	type metricOut struct {
		Metric   string   `json:"metric"`
		Value    float64  `json:"value"`
		Baseline *float64 `json:"baseline,omitempty"`
		Delta    *float64 `json:"delta,omitempty"`
		PTTest   *float64 `json:"p_ttest,omitempty"`
		PRandom  *float64 `json:"p_randomization,omitempty"`
	}
	out := struct {
		Queries  int                           `json:"queries"`
		Metrics  []metricOut                   `json:"metrics"`
		PerQuery map[string]map[string]float64 `json:"per_query,omitempty"`
		Notes    []string                      `json:"notes,omitempty"`
	}{Queries: len(r.Result.Queries), Notes: r.Notes}
	for i, m := range r.Result.Metrics {
		mo := metricOut{Metric: m.String(), Value: r.Result.Mean[i]}
		if r.Baseline != nil {
			c := r.Tests[i]
			mo.Baseline, mo.Delta, mo.PTTest, mo.PRandom = &c.MeanB, &c.Delta, &c.PTTest, &c.PRandom
		}
		out.Metrics = append(out.Metrics, mo)
	}
	if perQuery {
		out.PerQuery = map[string]map[string]float64{}
		for _, q := range r.Result.Queries {
			row := map[string]float64{}
			for i, m := range r.Result.Metrics {
				row[m.String()] = r.Result.PerQuery[q][i]
			}
			out.PerQuery[q] = row
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
