package recipe

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/offline"
)

// TestBEIRFeedback: an unsupervised run with first-stage feedback writes
// BM25's run as its baseline, the same as a run without feedback, and a
// pipeline.yaml with the feedback that, served over its index, ranks as
// run.trec does.
func TestBEIRFeedback(t *testing.T) {
	ctx := context.Background()
	data := retrievalData(t)
	plain, fb := filepath.Join(t.TempDir(), "plain"), filepath.Join(t.TempDir(), "fb")
	if err := BEIR(ctx, BEIROptions{Data: data, Out: plain, Unsupervised: true, Stages: []string{"overlap"}}); err != nil {
		t.Fatal(err)
	}
	if err := BEIR(ctx, BEIROptions{Data: data, Out: fb, Unsupervised: true, Stages: []string{"overlap"},
		FirstStage: rerank.FirstStage{Feedback: &rerank.Feedback{Docs: 3}}}); err != nil {
		t.Fatal(err)
	}
	if !sameRanking(readRun(t, filepath.Join(plain, "baseline.trec")), readRun(t, filepath.Join(fb, "baseline.trec"))) {
		t.Error("the baseline with feedback differs from the one without: want BM25 in both")
	}
	if sameRanking(readRun(t, filepath.Join(plain, "run.trec")), readRun(t, filepath.Join(fb, "run.trec"))) {
		t.Error("the run with feedback is the run without: feedback was not applied")
	}
	cfg, err := rerank.ReadConfig(filepath.Join(fb, "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if f := cfg.FirstStage.Feedback; f == nil || f.Docs != 3 {
		t.Fatalf("pipeline.yaml's feedback: %+v, want docs 3", f)
	}
	if served, _ := servedRun(t, fb, data); !sameRanking(readRun(t, filepath.Join(fb, "run.trec")), served) {
		t.Error("run.trec is not the published pipeline's run")
	}
}

// readRun reads a run file, failing the test when it cannot.
func readRun(t *testing.T, path string) dataset.Run {
	t.Helper()
	r, err := dataset.ReadRunFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sameRanking reports whether a and b rank the same queries' documents
// in the same order.
func sameRanking(a, b dataset.Run) bool {
	for _, q := range a.QueryIDs() {
		if !slices.EqualFunc(a.Ranking(q), b.Ranking(q), func(x, y dataset.Entry) bool { return x.DocID == y.DocID }) {
			return false
		}
	}
	return slices.Equal(a.QueryIDs(), b.QueryIDs())
}

// servedRun returns the pipeline an experiment published in out, served
// over out/index, and its run of the queries of the BEIR directory data.
func servedRun(t *testing.T, out, data string) (dataset.Run, *rerank.Pipeline) {
	t.Helper()
	idx, err := index.Open(filepath.Join(out, "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	p, _, err := rerank.LoadPipeline(filepath.Join(out, "pipeline.yaml"), rerank.EnvOf(idx))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	_, served, err := offline.RunDataset(context.Background(), idx, ds, p, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return served, p
}

// TestBEIRChooseFeedback: a run that chooses feedback publishes the
// pipeline it chose, with feedback or without as ChooseFeedback decides on
// the same corpus, and its run is the run of that choice made by hand.
func TestBEIRChooseFeedback(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		ds         *dataset.Dataset
		fb         rerank.Feedback
		neighbours int
		kept       bool
	}{
		{"templated, defaults", sentenceData(), rerank.Feedback{}, DefaultPseudoNeighbours, false},
		{"templated, 3 documents, 5 terms", sentenceData(), rerank.Feedback{Docs: 3, Terms: 5}, DefaultPseudoNeighbours, false},
		// The neighbours share the titles' words, which BM25 finds
		// already: feedback lowers MAP.
		{"mismatched titles, neighbours", mismatchData(), rerank.Feedback{}, DefaultPseudoNeighbours, false},
		{"mismatched titles, own document", mismatchData(), rerank.Feedback{}, 0, true},
		{"mismatched titles, own document, guarded", mismatchData(), rerank.Feedback{MinOverlap: 0.5}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := tc.ds
			data := filepath.Join(t.TempDir(), "data")
			if err := ds.Save(data); err != nil {
				t.Fatal(err)
			}
			po := PseudoOptions{Kinds: DefaultPseudoKinds(), Neighbours: tc.neighbours}
			choice, err := ChooseFeedback(ctx, ds.Corpus, tc.fb, 100, po, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Log(choice)
			if choice.Queries == 0 || choice.Graded.N != choice.Queries || choice.KnownItem.N != choice.Queries {
				t.Fatalf("%d pseudo-queries, %d and %d compared", choice.Queries, choice.Graded.N, choice.KnownItem.N)
			}
			if choice.Kept != tc.kept || choice.Kept != (choice.Graded.Delta > 0 && choice.Graded.PTTest < minGainP) {
				t.Fatalf("kept %v with %+.4f MAP (p = %.4f), want %v", choice.Kept, choice.Graded.Delta, choice.Graded.PTTest, tc.kept)
			}
			auto, forced := filepath.Join(t.TempDir(), "auto"), filepath.Join(t.TempDir(), "forced")
			fb := tc.fb
			if err := BEIR(ctx, BEIROptions{Data: data, Out: auto, Unsupervised: true, Stages: []string{"overlap"},
				FirstStage: rerank.FirstStage{Feedback: &fb}, ChooseFeedback: true, Pseudo: PseudoOptions{Neighbours: tc.neighbours}}); err != nil {
				t.Fatal(err)
			}
			var want *rerank.Feedback
			if choice.Kept {
				want = &fb
			}
			if err := BEIR(ctx, BEIROptions{Data: data, Out: forced, Unsupervised: true, Stages: []string{"overlap"},
				FirstStage: rerank.FirstStage{Feedback: want}}); err != nil {
				t.Fatal(err)
			}
			cfg, err := rerank.ReadConfig(filepath.Join(auto, "pipeline.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.FirstStage.Feedback != nil; got != choice.Kept {
				t.Errorf("pipeline.yaml has feedback %v, ChooseFeedback kept it %v", got, choice.Kept)
			}
			for _, f := range []string{"baseline.trec", "run.trec"} {
				a, errA := os.ReadFile(filepath.Join(auto, f))
				b, errB := os.ReadFile(filepath.Join(forced, f))
				if errA != nil || errB != nil {
					t.Fatal(errA, errB)
				}
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs from the run with the choice made by hand", f)
				}
			}
		})
	}
}

// TestBEIRChooseFeedbackRefused: choosing needs feedback to choose and
// the recipe's own index.
func TestBEIRChooseFeedbackRefused(t *testing.T) {
	data := retrievalData(t)
	for _, tc := range []struct {
		name string
		o    BEIROptions
		want string
	}{
		{"no feedback", BEIROptions{Data: data, Unsupervised: true, ChooseFeedback: true}, "needs the feedback to choose"},
		{"given index", BEIROptions{Data: data, Unsupervised: true, ChooseFeedback: true, Index: "somewhere",
			FirstStage: rerank.FirstStage{Feedback: &rerank.Feedback{}}}, "given index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Out = filepath.Join(t.TempDir(), "out")
			err := BEIR(context.Background(), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if _, err := os.Stat(tc.o.Out); err == nil {
				t.Errorf("a refused run left %s behind", tc.o.Out)
			}
		})
	}
}

// mismatchData is a collection where feedback finds what a title cannot:
// 10 topics of 25 documents, each titled by two of its topic's three title
// words, which its text never uses; the text speaks its topic's own
// vocabulary. A title pseudo-query (the title cut from its document; 100
// of the 250 are cut)
// finds the topic's other documents by their titles, and only their
// vocabulary, which feedback adds, finds its own.
func mismatchData() *dataset.Dataset {
	ds := &dataset.Dataset{Qrels: dataset.Qrels{}}
	word := func(k, j int, kind byte) string { return fmt.Sprintf("%c%c%cox", kind, 'b'+byte(k), 'b'+byte(j)) }
	for k := range 10 {
		for i := range 25 {
			v := func(j int) string { return word(k, j, 'v') }
			ds.Corpus = append(ds.Corpus, dataset.Doc{ID: fmt.Sprintf("t%dd%d", k, i),
				Title: word(k, i%3, 't') + " " + word(k, (i+1)%3, 't'),
				Text: fmt.Sprintf("The %s and %s went %s today. A %s saw the %s near %s. The %s met %s and %s there.",
					v(0), v(1), v(2), v(3), v(4), v(5+i%10), v(0), v(2), v(4))})
		}
		qid := fmt.Sprintf("q%d", k)
		ds.Queries = append(ds.Queries, dataset.Query{ID: qid, Text: word(k, 0, 'v')})
		ds.Qrels.Add(qid, fmt.Sprintf("t%dd0", k), 1)
	}
	return ds
}
