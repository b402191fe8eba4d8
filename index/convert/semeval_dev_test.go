package convert

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
)

// sharedSemEval returns the shared SemEval-2016 Task 3 folder, found from
// the module root (the directory holding go.mod) as ../shared/data, or
// skips the test when it is absent.
func sharedSemEval(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	data := filepath.Join(dir, "..", "shared", "data", "semeval2016-task3")
	if _, err := os.Stat(filepath.Join(data, "SemEval2016-Task3-CQA-QL-dev.xml")); err != nil {
		t.Skipf("SemEval-2016 Task 3 dev data not found (%v); it is expected in ../shared/data beside the module root", err)
	}
	return data
}

// TestSemEvalDevIRBaseline is the acceptance test of the converter and the
// evaluation: the real dev file, converted, ranked in the given order and
// scored, reproduces the task's official IR baseline, and the judgments and
// order agree with the official gold files.
func TestSemEvalDevIRBaseline(t *testing.T) {
	data := sharedSemEval(t)
	tests := []struct {
		st      Subtask
		gold    string
		queries int
		mapAt10 float64
		mrr     float64
	}{
		{SubtaskB, "SemEval2016-Task3-CQA-QL-dev.xml.subtaskB.relevancy", 50, 0.7135, 0.7667},
		{SubtaskA, "SemEval2016-Task3-CQA-QL-dev-subtaskA.xml.subtaskA.relevancy", 244, 0.5384, 0.6313},
	}
	for _, tc := range tests {
		t.Run("subtask "+string(tc.st), func(t *testing.T) {
			c := NewSemEval(tc.st)
			if err := c.AddFile(filepath.Join(data, "SemEval2016-Task3-CQA-QL-dev.xml")); err != nil {
				t.Fatal(err)
			}
			ds := c.Dataset()
			ms := eval.MustParseMetrics("map@10,mrr@10")

			res, err := eval.Evaluate(ds.Qrels, *ds.Candidates, ms)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Queries) != tc.queries || len(ds.Queries) != tc.queries {
				t.Errorf("%d judged queries, %d queries; want %d", len(res.Queries), len(ds.Queries), tc.queries)
			}
			checkRounded(t, "converted qrels", res, tc.mapAt10, tc.mrr)

			// The official gold file: the same judgments...
			gold, err := dataset.ReadQrelsFile(filepath.Join(data, tc.gold))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(binary(ds.Qrels), gold) {
				t.Error("converted judgments differ from the official gold file")
			}
			res, err = eval.Evaluate(gold, *ds.Candidates, ms)
			if err != nil {
				t.Fatal(err)
			}
			checkRounded(t, "gold file", res, tc.mapAt10, tc.mrr)

			// ...and the same IR order: its ir_rank column sorts each
			// query's candidates as candidates.trec does.
			goldOrder := readGoldOrder(t, filepath.Join(data, tc.gold))
			for _, qid := range ds.Candidates.QueryIDs() {
				var got []string
				for _, e := range ds.Candidates.Ranking(qid) {
					got = append(got, e.DocID)
				}
				if !reflect.DeepEqual(got, goldOrder[qid]) {
					t.Errorf("%s: candidates %v, gold IR order %v", qid, got, goldOrder[qid])
				}
			}
		})
	}
}

func checkRounded(t *testing.T, what string, res eval.Result, mapAt10, mrr float64) {
	t.Helper()
	round := func(v float64) float64 { return math.Round(v*1e4) / 1e4 }
	if got := round(res.Value("map@10")); got != mapAt10 {
		t.Errorf("%s: MAP = %.4f, want %.4f", what, res.Value("map@10"), mapAt10)
	}
	if got := round(res.Value("mrr@10")); got != mrr {
		t.Errorf("%s: MRR = %.4f, want %.4f", what, res.Value("mrr@10"), mrr)
	}
}

// binary maps graded judgments to the gold files' true (1) / false (0).
func binary(q dataset.Qrels) dataset.Qrels {
	out := dataset.Qrels{}
	for qid, docs := range q {
		for did, g := range docs {
			out.Add(qid, did, min(g, 1))
		}
	}
	return out
}

// readGoldOrder returns each query's candidates sorted by the gold file's
// ir_rank column (the third).
func readGoldOrder(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type cand struct {
		id   string
		rank int
	}
	byQuery := map[string][]cand{}
	for {
		var qid, did, score, label string
		var rank int
		_, err := fmt.Fscan(f, &qid, &did, &rank, &score, &label)
		if err != nil {
			break
		}
		byQuery[qid] = append(byQuery[qid], cand{did, rank})
	}
	out := map[string][]string{}
	for qid, cs := range byQuery {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].rank < cs[j].rank })
		for _, c := range cs {
			out[qid] = append(out[qid], c.id)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no gold lines read", path)
	}
	return out
}
