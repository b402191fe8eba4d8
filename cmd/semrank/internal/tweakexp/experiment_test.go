package tweakexp

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/tweak"
)

// smallExperiment is the documented protocol with a short α grid and few
// iterations, so that the 12 queries of the test slice train in a moment.
func smallExperiment() Experiment {
	e := DefaultExperiment()
	e.Losses = []tweak.Loss{tweak.LossLog}
	e.Alphas = []float64{0.01, 1}
	e.MaxIterations = 20
	e.FusionGrid = []float64{0, 0.5, 1}
	return e
}

// TestCrossValidate checks the experiment's bookkeeping on real SemEval B
// queries: every judged query is tested in exactly one fold, by every
// system; the IR-order system is the given order; each fold reports what
// it chose; the same seed gives the same report.
func TestCrossValidate(t *testing.T) {
	ds := testData(t)
	df := corpusDF(ds)
	e := smallExperiment()
	o, err := e.CrossValidate(context.Background(), ds, 3, df)
	if err != nil {
		t.Fatal(err)
	}
	judged, err := judgedQueries(ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Qrels) != len(judged) {
		t.Errorf("outcome judges %d queries, want %d", len(o.Qrels), len(judged))
	}
	want := []string{SysIR, SysTFIDF, "tweak-log", SysTFIDF + "+rank", "tweak-log+rank"}
	if !slices.Equal(o.Systems, want) {
		t.Errorf("systems %v, want %v", o.Systems, want)
	}
	for _, sys := range o.Systems {
		run := o.Runs[sys]
		if got := run.Len(); got != len(judged) {
			t.Errorf("%s ranks %d queries, want %d", sys, got, len(judged))
		}
		for _, q := range judged {
			if got, want := len(run.Ranking(q)), len(ds.Candidates.Ranking(q)); got != want {
				t.Errorf("%s, query %s: %d candidates, want %d", sys, q, got, want)
			}
		}
	}
	for _, q := range judged {
		got, given := o.Runs[SysIR].Sorted(q), ds.Candidates.Sorted(q)
		for i := range given {
			if got[i].DocID != given[i].DocID {
				t.Errorf("IR order of %s: %s at %d, given %s", q, got[i].DocID, i+1, given[i].DocID)
				break
			}
		}
	}
	if len(o.Chosen) != 3 || !strings.HasPrefix(o.Chosen[2], "fold 3: log α=") {
		t.Errorf("chosen %q, want one line per fold", o.Chosen)
	}

	var a, b bytes.Buffer
	if err := o.WriteMarkdown(&a); err != nil {
		t.Fatal(err)
	}
	again, err := e.CrossValidate(context.Background(), ds, 3, df)
	if err != nil {
		t.Fatal(err)
	}
	if err := again.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Error("two runs with one seed wrote different reports")
	}
	for _, line := range []string{"| ir-order |", "| tweak-log | tfidf | map@10 |", "| tweak-log+rank | ir-order | auc |"} {
		if !strings.Contains(a.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, a.String())
		}
	}

	for _, k := range []int{1, len(judged) + 1} {
		if _, err := e.CrossValidate(context.Background(), ds, k, df); err == nil {
			t.Errorf("%d folds for %d queries: no error", k, len(judged))
		}
	}
}

// TestSplitTestsOnlyTheTestQueries: a train/test split reports the test
// queries alone, and queries without judgments are left out of both.
func TestSplitTestsOnlyTheTestQueries(t *testing.T) {
	ds := testData(t)
	judged, err := judgedQueries(ds)
	if err != nil {
		t.Fatal(err)
	}
	trainQ, testQ := judged[:8], judged[8:]
	sub := func(qids []string) *dataset.Dataset {
		keep := func(q string) bool { return slices.Contains(qids, q) }
		c := ds.Candidates.Filter(keep)
		out := *ds
		out.Candidates = &c
		out.Qrels = dataset.Qrels{}
		for _, q := range qids {
			out.Qrels[q] = ds.Qrels[q]
		}
		return &out
	}
	o, err := smallExperiment().Split(context.Background(), sub(trainQ), sub(testQ), corpusDF(ds))
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Qrels) != len(testQ) {
		t.Errorf("split judges %d queries, want the %d test queries", len(o.Qrels), len(testQ))
	}
	for _, q := range trainQ {
		if o.Runs[SysTFIDF].Ranking(q) != nil {
			t.Errorf("training query %s was ranked as a test query", q)
		}
	}
}

// testData loads the SemEval-2016 subtask B queries of testdata/tweak.
func testData(t *testing.T) *dataset.Dataset {
	t.Helper()
	ds, err := dataset.Load("../../../../testdata/tweak")
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// corpusDF counts document frequencies over the dataset's corpus.
func corpusDF(ds *dataset.Dataset) *tweak.DFTable {
	texts := make([]string, len(ds.Corpus))
	for i, d := range ds.Corpus {
		texts[i] = d.FullText()
	}
	return tweak.CountDF(texts)
}
