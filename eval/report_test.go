package eval

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
)

func TestReport(t *testing.T) {
	q := dataset.Qrels{"q1": {"a": 1, "b": 0}, "q2": {"a": 0, "b": 1}}
	run, base := dataset.NewRun(), dataset.NewRun()
	for _, e := range ranked("a", "b") {
		run.Add("q1", e)
		base.Add("q1", e)
	}
	for _, e := range ranked("b", "a") {
		run.Add("q2", e)
	}
	for _, e := range ranked("a", "b") {
		base.Add("q2", e)
	}
	ms := MustParseMetrics("map@10,p@1")

	rep, err := NewReport(q, run, &base, ms)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tests) != 2 || rep.Tests[0].MeanA != 1 || rep.Tests[0].MeanB != 0.75 || rep.Tests[0].Improved != 1 {
		t.Fatalf("Tests = %+v", rep.Tests)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"q2", "map@10", "1.0000", "0.7500", "+0.2500", "(queries: 2)", "1/0"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js, true); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Queries int `json:"queries"`
		Metrics []struct {
			Metric   string   `json:"metric"`
			Value    float64  `json:"value"`
			Baseline *float64 `json:"baseline"`
			PTTest   *float64 `json:"p_ttest"`
			PRandom  *float64 `json:"p_randomization"`
		} `json:"metrics"`
		PerQuery map[string]map[string]float64 `json:"per_query"`
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatalf("%v:\n%s", err, js.String())
	}
	m := out.Metrics[0]
	if out.Queries != 2 || m.Metric != "map@10" || m.Value != 1 || m.Baseline == nil || *m.Baseline != 0.75 ||
		m.PTTest == nil || math.Abs(*m.PTTest-0.5) > 1e-12 || // t = 1 with 1 df
		m.PRandom == nil || math.IsNaN(*m.PRandom) {
		t.Errorf("JSON report = %s", js.String())
	}
	if out.PerQuery["q2"]["p@1"] != 1 {
		t.Errorf("per-query q2 p@1 = %v, want 1", out.PerQuery["q2"]["p@1"])
	}

	// Without a baseline: one column, no tests.
	rep, err = NewReport(q, run, nil, ms)
	if err != nil {
		t.Fatal(err)
	}
	text.Reset()
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "baseline") || !strings.Contains(text.String(), "p@1     1.0000") {
		t.Errorf("text report without baseline:\n%s", text.String())
	}

	// A baseline naming an unjudged query is refused.
	bad := dataset.NewRun()
	bad.Add("q9", dataset.Entry{DocID: "a", Score: 1})
	if _, err := NewReport(q, run, &bad, ms); err == nil {
		t.Error("NewReport accepted a baseline naming an unjudged query")
	}
}

// TestReportLeavesOutUndefinedAUC checks that judgments marking nothing not
// relevant (CACM's) give no AUC row, which would read 0.5 for every run,
// but a note saying why, and that AUC stays where a judgment is 0.
func TestReportLeavesOutUndefinedAUC(t *testing.T) {
	run := dataset.NewRun()
	for _, e := range ranked("a", "b", "c") {
		run.Add("q1", e)
	}
	ms := MustParseMetrics("map@10,auc")
	const note = "note: auc left out: the judgments mark no document not relevant"

	onlyRelevant := dataset.Qrels{"q1": {"b": 1}}
	rep, err := NewReport(onlyRelevant, run, &run, ms)
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	if err := rep.WriteText(&text, true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "\nauc ") || strings.Contains(text.String(), "  auc") || !strings.Contains(text.String(), note) {
		t.Errorf("text report has an AUC row or lacks the note:\n%s", text.String())
	}
	if len(rep.Tests) != 1 {
		t.Errorf("%d tests, want 1 (map@10)", len(rep.Tests))
	}
	if err := rep.WriteJSON(&js, true); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Metrics []struct {
			Metric string `json:"metric"`
		} `json:"metrics"`
		PerQuery map[string]map[string]float64 `json:"per_query"`
		Notes    []string                      `json:"notes"`
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Metrics) != 1 || out.Metrics[0].Metric != "map@10" || len(out.PerQuery["q1"]) != 1 ||
		len(out.Notes) != 1 || !strings.HasPrefix("note: "+out.Notes[0], note) {
		t.Errorf("JSON report = %s", js.String())
	}
	if _, err := NewReport(onlyRelevant, run, nil, MustParseMetrics("auc")); err == nil || !strings.Contains(err.Error(), "no metric to report: auc left out") {
		t.Errorf("AUC alone: err = %v, want one saying it is left out", err)
	}

	// One judgment of 0 makes AUC a measurement again: 0.5 here, b being
	// ranked between a and c, and reported as such.
	judged := dataset.Qrels{"q1": {"b": 1, "c": 0}, "q2": {"x": 1}}
	rep, err = NewReport(judged, run, nil, ms)
	if err != nil {
		t.Fatal(err)
	}
	text.Reset()
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if rep.Notes != nil || !strings.Contains(text.String(), "auc     0.5000") || strings.Contains(text.String(), "note:") {
		t.Errorf("report with a judgment of 0:\n%s", text.String())
	}
}
