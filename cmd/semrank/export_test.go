package main

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// demoSplit is a converted SemEval split (subtask B dev) with judgments.
const demoSplit = "../../testdata/demo"

// writeDemoRun writes a run over demoSplit's candidates with scores that
// reorder them, leaving out each query's candidates that drop accepts, and
// returns its path.
func writeDemoRun(t *testing.T, dir string, drop func(qid string, i int) bool) string {
	t.Helper()
	cands, err := dataset.ReadRunFile(filepath.Join(demoSplit, dataset.CandidatesFile))
	if err != nil {
		t.Fatal(err)
	}
	run := dataset.NewRun()
	for _, qid := range cands.QueryIDs() {
		for i, e := range cands.Ranking(qid) {
			if drop(qid, i) {
				continue
			}
			h := fnv.New32a()
			h.Write([]byte(e.DocID))
			run.Add(qid, dataset.Entry{DocID: e.DocID, Score: float64(h.Sum32()) / 1e8}) // distinct: no ties
		}
	}
	p := filepath.Join(dir, "run.trec")
	if err := run.WriteFile(p, "test"); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeTestFile writes content to path and returns path.
func writeTestFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExportSemEvalScoresAlike exports a run over the demo split and checks
// that the prediction file, scored against gold in the task's .relevancy
// form, gives the same numbers as the run scored against the split's
// judgments, and lists every candidate once with the top 4 labelled true.
func TestExportSemEvalScoresAlike(t *testing.T) {
	dir := t.TempDir()
	run := writeDemoRun(t, dir, func(string, int) bool { return false })
	pred := filepath.Join(dir, "run.pred")
	out, err := execute("export", "semeval2016", "--run", run, "--data", demoSplit, "--out", pred)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if want := "wrote " + pred + ": 50 queries, 500 candidates, 200 labelled true"; !strings.Contains(out, want) || strings.Contains(out, "note:") {
		t.Errorf("output lacks %q or has a note:\n%s", want, out)
	}

	// The gold file as the task gives it: qid, candidate, IR rank, IR
	// score, label, in the XML's order, which candidates.trec keeps.
	q, err := dataset.ReadQrelsFile(filepath.Join(demoSplit, dataset.QrelsFile))
	if err != nil {
		t.Fatal(err)
	}
	cands, err := dataset.ReadRunFile(filepath.Join(demoSplit, dataset.CandidatesFile))
	if err != nil {
		t.Fatal(err)
	}
	var gold strings.Builder
	for _, qid := range cands.QueryIDs() {
		for _, e := range cands.Ranking(qid) {
			fmt.Fprintf(&gold, "%s\t%s\t%d\t%g\t%t\n", qid, e.DocID, e.Rank, e.Score, q[qid][e.DocID] > 0)
		}
	}
	goldPath := writeTestFile(t, filepath.Join(dir, "dev.relevancy"), gold.String())
	const metrics = "map@10,map,mrr@10,p@1,auc"
	want, err := execute("eval", "--qrels", filepath.Join(demoSplit, dataset.QrelsFile), "--run", run, "--metrics", metrics, "--per-query")
	if err != nil {
		t.Fatal(err)
	}
	got, err := execute("eval", "--qrels", goldPath, "--run", pred, "--metrics", metrics, "--per-query")
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("predictions against gold:\n%s\nrun against judgments:\n%s", got, want)
	}

	// The scorer pairs the lines of gold and predictions by position: the
	// ids must match line by line. 4 true per query.
	b, err := os.ReadFile(pred)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	goldLines := strings.Split(strings.TrimSuffix(gold.String(), "\n"), "\n")
	if len(lines) != len(goldLines) {
		t.Fatalf("%d lines, gold has %d", len(lines), len(goldLines))
	}
	trues := map[string]int{}
	for i, l := range lines {
		f, g := strings.Split(l, "\t"), strings.Split(goldLines[i], "\t")
		if len(f) != 5 || f[0] != g[0] || f[1] != g[1] || f[2] != "0" {
			t.Fatalf("line %d: %q, gold has %q", i+1, l, goldLines[i])
		}
		if f[4] == "true" {
			trues[f[0]]++
		}
	}
	for _, qid := range cands.QueryIDs() {
		if trues[qid] != defaultTop {
			t.Errorf("%s: %d labelled true, want %d", qid, trues[qid], defaultTop)
		}
	}
}

// TestExportSemEvalCompletes checks that with --data the candidates a run
// lacks are written after its own, labelled false, with a note saying how
// many, and how --top and --threshold label the rest.
func TestExportSemEvalCompletes(t *testing.T) {
	dir := t.TempDir()
	// Q268 keeps its first 3 candidates, Q269 none, the others all 10.
	run := writeDemoRun(t, dir, func(qid string, i int) bool { return qid == "Q268" && i >= 3 || qid == "Q269" })
	pred := filepath.Join(dir, "run.pred")
	for _, tc := range []struct {
		flags []string
		trues int // in all
		q268  string
	}{
		{nil, 3 + 48*4, "true true true false false false false false false false"},
		{[]string{"--top", "1"}, 1 + 48, "true false false false false false false false false false"},
		{[]string{"--threshold", "-100"}, 3 + 48*10, "true true true false false false false false false false"},
		{[]string{"--threshold", "100"}, 0, "false false false false false false false false false false"},
	} {
		out, err := execute(append([]string{"export", "semeval2016", "--run", run, "--data", demoSplit, "--out", pred}, tc.flags...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", tc.flags, err, out)
		}
		if want := "note: " + run + " lacks 17 of the 500 candidates in " + filepath.Join(demoSplit, dataset.CandidatesFile) + " (among them every candidate of 1 query); they get scores below its own and the label false"; !strings.Contains(out, want) {
			t.Errorf("%v: output lacks %q:\n%s", tc.flags, want, out)
		}
		if want := fmt.Sprintf("500 candidates, %d labelled true", tc.trues); !strings.Contains(out, want) {
			t.Errorf("%v: output lacks %q:\n%s", tc.flags, want, out)
		}
		back, err := dataset.ReadRunFile(pred)
		if err != nil {
			t.Fatal(err)
		}
		labels, err := dataset.ReadQrelsFile(pred)
		if err != nil {
			t.Fatal(err)
		}
		var q268 []string
		for _, e := range back.Sorted("Q268") {
			q268 = append(q268, fmt.Sprint(labels["Q268"][e.DocID] > 0))
		}
		if got := strings.Join(q268, " "); got != tc.q268 {
			t.Errorf("%v: Q268 labels %s, want %s", tc.flags, got, tc.q268)
		}
		// The lines in the given order; ranked by score, Q268's 3 ranked
		// entries first, in the run's order, then the others in the given
		// order; Q269 in the given order.
		given, _ := dataset.ReadRunFile(filepath.Join(demoSplit, dataset.CandidatesFile))
		ranked, _ := dataset.ReadRunFile(run)
		for _, qid := range []string{"Q268", "Q269"} {
			want := entryIDs(given.Ranking(qid))
			if got := entryIDs(back.Ranking(qid)); got != want {
				t.Errorf("%s: lines %s, want the given order %s", qid, got, want)
			}
		}
		if got, want := entryIDs(back.Sorted("Q268")), entryIDs(append(ranked.Sorted("Q268"), given.Ranking("Q268")[3:]...)); got != want {
			t.Errorf("Q268 ranked %s, want %s", got, want)
		}
		if got, want := entryIDs(back.Sorted("Q269")), entryIDs(given.Ranking("Q269")); got != want {
			t.Errorf("Q269 ranked %s, want %s", got, want)
		}
	}
}

// entryIDs joins the entries' document ids.
func entryIDs(es []dataset.Entry) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.DocID
	}
	return strings.Join(s, " ")
}

// TestExportSemEvalWithoutData checks that without --data a run is
// written in its own order, labelled by score, with a note that the
// scorer wants the gold file's order.
func TestExportSemEvalWithoutData(t *testing.T) {
	dir := t.TempDir()
	run := writeTestFile(t, filepath.Join(dir, "run.trec"), "Q1 Q0 Q1_R1 2 -3 x\nQ1 Q0 Q1_R2 1 0.5 x\nQ2 Q0 Q2_R1 1 7 x\n")
	pred := filepath.Join(dir, "run.pred")
	out, err := execute("export", "semeval2016", "--run", run, "--out", pred, "--top", "1")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if want := "note: without --data the lines follow " + run; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	b, err := os.ReadFile(pred)
	if err != nil {
		t.Fatal(err)
	}
	const want = "Q1\tQ1_R1\t0\t-3\tfalse\nQ1\tQ1_R2\t0\t0.5\ttrue\nQ2\tQ2_R1\t0\t7\ttrue\n"
	if string(b) != want {
		t.Errorf("wrote\n%s\nwant\n%s", b, want)
	}
}

// TestExportSemEvalBadInput checks that bad runs and flags fail with an
// error naming the file and line or the flag, and write nothing.
func TestExportSemEvalBadInput(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string { return writeTestFile(t, filepath.Join(dir, name), content) }
	good := file("good.trec", "Q268 Q0 Q268_R4 1 2 x\n")
	malformed := file("malformed.trec", "Q268 Q0 Q268_R4 1 2 x\nQ268 Q0 Q268_R5 2 x\n")
	badScore := file("score.trec", "Q268 Q0 Q268_R4 1 2 x\nQ268 Q0 Q268_R5 2 high x\n")
	empty := file("empty.trec", "\n")
	infScore := file("inf.trec", "Q268 Q0 Q268_R4 1 2 x\nQ268 Q0 Q268_R5 2 -Inf x\n")
	// At float64's floor no lower score is left to break a tie with, or to
	// give a candidate the run lacks (Q268_R5 and the rest of Q268's).
	floorTied := file("floortied.trec", "Q268 Q0 Q268_R4 1 -1.7976931348623157e308 x\nQ268 Q0 Q268_R5 2 -1.7976931348623157e308 x\n")
	floorAlone := file("flooralone.trec", "Q268 Q0 Q268_R4 1 -1.7976931348623157e308 x\n")
	unknownQ := file("unknownq.trec", "Q268 Q0 Q268_R4 1 2 x\nQ999 Q0 Q999_R1 1 2 x\nQ998 Q0 Q998_R1 1 2 x\n")
	unknownD := file("unknownd.trec", "Q268 Q0 Q268_R4 1 2 x\nQ268 Q0 Q269_R1 2 1 x\n")
	noCands := filepath.Join(dir, "nocands")
	if err := os.Mkdir(noCands, 0o755); err != nil {
		t.Fatal(err)
	}
	nowhere := filepath.Join(dir, "absent")
	export := func(run string, flags ...string) []string {
		return append([]string{"export", "semeval2016", "--run", run, "--data", demoSplit, "--out", nowhere}, flags...)
	}
	tests := []struct {
		args []string
		want string
	}{
		{export(malformed), malformed + ":2: 5 fields, but line 1 has 6"},
		{export(badScore), badScore + `:2: score "high" is not a number`},
		{export(empty), empty + ": no records"},
		{export(infScore), infScore + `:2: query "Q268", document "Q268_R5": score -Inf is not finite`},
		{export(floorTied), floorTied + `: query "Q268": its scores reach the lowest float64`},
		{export(floorAlone), floorAlone + `: query "Q268": its scores reach the lowest float64`},
		{[]string{"export", "semeval2016", "--run", floorTied, "--out", nowhere}, floorTied + `: query "Q268": its scores reach the lowest float64`},
		{export(unknownQ), unknownQ + `:2: queries not in ` + filepath.Join(demoSplit, dataset.CandidatesFile) + `: "Q999", "Q998"`},
		{export(unknownD), unknownD + `:2: document "Q269_R1" is not a candidate of query "Q268"`},
		{export(filepath.Join(dir, "missing.trec")), "missing.trec"},
		{export(good, "--top", "-1"), "--top -1: want zero or a positive number"},
		{export(good, "--top", "2", "--threshold", "0"), "give --top or --threshold, not both"},
		{export(good, "--threshold", "NaN"), "--threshold NaN: want a finite number"},
		{[]string{"export", "semeval2016", "--run", good, "--data", noCands, "--out", nowhere}, "--data " + noCands + " has no candidates.trec"},
		{[]string{"export", "semeval2016", "--run", good, "--out", good}, "--out " + good + " would overwrite"},
		{[]string{"export", "semeval2016", "--run", good, "--data", demoSplit, "--out", filepath.Join(demoSplit, dataset.CandidatesFile)}, "would overwrite"},
		{[]string{"export", "semeval2016", "--out", nowhere}, `"run"`},
		{[]string{"export", "trec"}, `unknown command "trec"`},
	}
	for i, tt := range tests {
		// Named by number: the messages hold temporary paths.
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, err := execute(tt.args...)
			_, statErr := os.Stat(nowhere)
			switch {
			case err == nil || !strings.Contains(err.Error(), tt.want):
				t.Errorf("%v: err = %v, want one containing %q", tt.args, err, tt.want)
			case !os.IsNotExist(statErr):
				t.Errorf("%v: %s written", tt.args, nowhere)
			}
		})
	}
}

// TestExportSemEvalKeepsTiedOrder exports a run whose scores all tie,
// ranking each query's candidates in reverse: the scorer orders ties by
// the gold file, so the export lowers tied scores to keep the run's order,
// and the predictions score as the run does.
func TestExportSemEvalKeepsTiedOrder(t *testing.T) {
	dir := t.TempDir()
	cands, err := dataset.ReadRunFile(filepath.Join(demoSplit, dataset.CandidatesFile))
	if err != nil {
		t.Fatal(err)
	}
	var trec strings.Builder
	for _, qid := range cands.QueryIDs() {
		es := cands.Ranking(qid)
		for i := range es {
			fmt.Fprintf(&trec, "%s Q0 %s %d 1 tied\n", qid, es[len(es)-1-i].DocID, i+1)
		}
	}
	run := writeTestFile(t, filepath.Join(dir, "run.trec"), trec.String())
	pred := filepath.Join(dir, "run.pred")
	out, err := execute("export", "semeval2016", "--run", run, "--data", demoSplit, "--out", pred)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "note: 50 queries rank candidates with equal scores") {
		t.Errorf("no note about the ties:\n%s", out)
	}
	qrels := filepath.Join(demoSplit, dataset.QrelsFile)
	want, err := execute("eval", "--qrels", qrels, "--run", run, "--metrics", "map@10,mrr@10", "--per-query")
	if err != nil {
		t.Fatal(err)
	}
	got, err := execute("eval", "--qrels", qrels, "--run", pred, "--metrics", "map@10,mrr@10", "--per-query")
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("predictions:\n%s\nrun:\n%s", got, want)
	}
}
