package dataset

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// wantParseError checks that err is a *ParseError for file at line (0: no
// line) whose message contains msg.
func wantParseError(t *testing.T, err error, file string, line int, msg string) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *ParseError", err, err)
	}
	if pe.File != file || pe.Line != line || !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q: want file %s, line %d, message containing %q", err, file, line, msg)
	}
}

func TestReadQrelsForms(t *testing.T) {
	want := Qrels{"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}
	tests := []struct {
		name, in string
		want     Qrels
	}{
		{"BEIR TSV with header", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq2\td1\t2\n", want},
		{"BEIR TSV without header", "q1\td1\t1\nq1\td2\t0\nq2\td1\t2\n", want},
		{"TREC", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n", want},
		{"TREC CRLF and blank lines", "q1 0 d1 1\r\n\r\nq1 0 d2 0\r\n  \nq2 0 d1 2", want},
		{"TREC negative grade is not relevant", "q1 0 d1 -1\nq1 0 d2 1\n", Qrels{"q1": {"d1": -1, "d2": 1}}},
		{"repeated judgment", "q1 0 d1 1\nq1 0 d1 1\n", Qrels{"q1": {"d1": 1}}},
		// A UTF-8 byte order mark (Windows editors write one) is not part
		// of the first query id, nor does it hide the BEIR header.
		{"BEIR TSV with BOM and header", "\ufeffquery-id\tcorpus-id\tscore\r\nq1\td1\t1\r\nq1\td2\t0\r\nq2\td1\t2\r\n", want},
		{"TREC with BOM", "\ufeffq1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n", want},
		{"SemEval gold with BOM", "\ufeffQ1\tQ1_R1\t1\t1\ttrue\nQ1\tQ1_R2\t2\t0.5\tfalse\n", Qrels{"Q1": {"Q1_R1": 1, "Q1_R2": 0}}},
		{
			"SemEval gold",
			"Q268\tQ268_R4\t4\t0.25\ttrue\nQ268\tQ268_R9\t9\t0.111111111111111\tfalse\nQ269\tQ269_R1\t1\t1\tfalse\n",
			Qrels{"Q268": {"Q268_R4": 1, "Q268_R9": 0}, "Q269": {"Q269_R1": 0}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadQrels(strings.NewReader(tc.in), "q.tsv")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ReadQrels = %v, want %v", got, tc.want)
			}
		})
	}
	if n := want.Relevant("q1"); n != 1 {
		t.Errorf("Relevant(q1) = %d, want 1", n)
	}
}

func TestReadQrelsErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		msg      string
	}{
		{"BEIR non-numeric label", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\tgood\n", 3, `relevance "good" is not an integer`},
		{"TREC non-numeric label", "q1 0 d1 1\nq1 0 d2 1.5\n", 2, `relevance "1.5" is not an integer`},
		{"grade beyond int", "q1\td1\t99999999999999999999\n", 1, `relevance "99999999999999999999" is out of range`},
		{"SemEval label", "q1 d1 1 1 true\nq1 d2 2 0.5 maybe\n", 2, `label "maybe"`},
		{"two fields", "q1 0 d1 1\n\nq1 d2\n", 3, "2 fields"},
		{"one field", "q1 0 d1 1\nq1\n", 2, "1 fields"},
		{"six fields", "q1 Q0 d1 1 0.5 run\n", 1, "6 fields"},
		{"header later is data", "q1\td1\t1\nquery-id\tcorpus-id\tscore\n", 2, `relevance "score"`},
		// One file holds one form: a line cut short, or one from another
		// file, is not read as a judgment in another form.
		{"SemEval line without its label", "Q1\tQ1_R1\t1\t1\ttrue\nQ1\tQ1_R2\t2\t1\n", 2, "4 fields, but line 1 has 5"},
		{"TREC line without its grade", "1 0 1410 1\n\n1 0 1411\n", 3, "3 fields, but line 1 has 4"},
		{"BEIR header then TREC", "query-id\tcorpus-id\tscore\nq1 0 d1 1\n", 2, "4 fields, but line 1 has 3"},
		{"conflicting duplicate", "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 0\n", 3, `document "d1" judged again for query "q1" with relevance 0 (was 1)`},
		{"empty file", "", 0, "no records"},
		{"header only", "query-id\tcorpus-id\tscore\n", 0, "no records"},
		{"blank lines only", "\n  \r\n", 0, "no records"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := ReadQrels(strings.NewReader(tc.in), "data/qrels.tsv")
			if q != nil {
				t.Errorf("qrels %v returned with the error", q)
			}
			wantParseError(t, err, "data/qrels.tsv", tc.line, tc.msg)
		})
	}
}

func TestQrelsWriteRoundTrip(t *testing.T) {
	q := Qrels{"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}, "query-id": {"corpus-id": 1}}
	for name, write := range map[string]func(Qrels, *bytes.Buffer) error{
		"TSV":  func(q Qrels, b *bytes.Buffer) error { return q.WriteTSV(b) },
		"TREC": func(q Qrels, b *bytes.Buffer) error { return q.WriteTREC(b) },
	} {
		var buf bytes.Buffer
		if err := write(q, &buf); err != nil {
			t.Fatal(err)
		}
		got, err := ReadQrels(&buf, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, q) {
			t.Errorf("%s round trip = %v, want %v", name, got, q)
		}
	}
}

func TestReadRun(t *testing.T) {
	const in = "q2 Q0 b 1 0.9 sys\nq2 Q0 a 2 0.9 sys\n\nq1 Q0 c 1 -1.5e-3 sys\r\nq2 Q0 c 3 2 sys\n"
	run, err := ReadRun(strings.NewReader(in), "x.trec")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(run.QueryIDs(), ","); got != "q2,q1" || run.Len() != 2 || run.File != "x.trec" {
		t.Errorf("QueryIDs = %s, Len = %d, File = %q", got, run.Len(), run.File)
	}
	want := []Entry{{"b", 0.9, 1, 1}, {"a", 0.9, 2, 2}, {"c", 2, 3, 5}}
	if got := run.Ranking("q2"); !reflect.DeepEqual(got, want) {
		t.Errorf("Ranking(q2) = %v, want %v", got, want)
	}
	var ids []string
	for _, e := range run.Sorted("q2") {
		ids = append(ids, e.DocID)
	}
	if got := strings.Join(ids, ","); got != "c,b,a" {
		t.Errorf("Sorted(q2) = %s, want c,b,a", got)
	}

	// Write sorts by score and renumbers ranks; reading it back gives
	// the sorted ranking.
	var buf bytes.Buffer
	if err := run.Write(&buf, ""); err != nil {
		t.Fatal(err)
	}
	const written = "q2 Q0 c 1 2 semrank\nq2 Q0 b 2 0.9 semrank\nq2 Q0 a 3 0.9 semrank\nq1 Q0 c 1 -0.0015 semrank\n"
	if buf.String() != written {
		t.Errorf("Write =\n%s\nwant\n%s", buf.String(), written)
	}
	back, err := ReadRun(&buf, "back")
	if err != nil {
		t.Fatal(err)
	}
	checkReadBack(t, run, back, true)
}

func TestReadRunErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		msg      string
	}{
		// One file holds one form: a TREC line cut short is not read as a
		// SemEval line, nor the other way round.
		{"TREC line without its tag", "q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.4\n", 2, "5 fields, but line 1 has 6"},
		{"SemEval line then TREC", "Q1\tQ1_R1\t0\t2\ttrue\nQ1 Q0 Q1_R2 2 1 t\n", 2, "6 fields, but line 1 has 5"},
		{"five fields without a label", "q1 Q0 a 1 0.5\n", 1, `label "0.5" is neither true nor false (5 fields: the SemEval form; a TREC run has 6`},
		{"SemEval label", "Q1\tQ1_R1\t0\t2\ttrue\nQ1\tQ1_R2\t0\t1\tTrue\n", 2, `label "True"`},
		{"SemEval bad score", "Q1\tQ1_R1\t0\thigh\ttrue\n", 1, `score "high"`},
		{"SemEval duplicate", "Q1\tQ1_R1\t0\t2\ttrue\nQ1\tQ1_R1\t0\t1\tfalse\n", 2, `document "Q1_R1" listed twice for query "Q1"`},
		{"four fields", "q1 a 1 0.5\n", 1, "4 fields; want 6 (TREC: qid Q0 docid rank score tag) or 5 (SemEval"},
		{"seven fields", "q1 Q0 a 1 0.5 t extra\n", 1, "7 fields"},
		{"bad rank", "q1 Q0 a first 0.5 t\n", 1, `rank "first"`},
		{"bad score", "q1 Q0 a 1 0.5 t\n\nq1 Q0 b 2 high t\n", 3, `score "high"`},
		{"NaN score", "q1 Q0 a 1 NaN t\n", 1, `score "NaN" is not a number`},
		{"score beyond float64", "q1 Q0 a 1 0.5 t\nq1 Q0 b 2 -1e400 t\n", 2, `score "-1e400" is out of range`},
		{"rank beyond int", "q1 Q0 a 99999999999999999999 0.5 t\n", 1, `rank "99999999999999999999" is out of range`},
		{"duplicate doc", "q1 Q0 a 1 0.5 t\nq2 Q0 a 1 0.5 t\nq1 Q0 a 2 0.4 t\n", 3, `document "a" listed twice for query "q1"`},
		{"empty", "", 0, "no records"},
		{"BOM only", "\ufeff\n", 0, "no records"},
		{"BOM not at the start", "q1 Q0 a 1 0.5 t\n\ufeffq1 Q0 b 2 0.4 t\n", 2, "not at the start of the file"},
		{"line too long", "q1 Q0 a 1 0.5 t\nq1 Q0 b 2 " + strings.Repeat("1", MaxLineBytes) + " t\n", 2, "longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run, err := ReadRun(strings.NewReader(tc.in), "r.trec")
			if run.Len() != 0 {
				t.Errorf("run with %d queries returned with the error", run.Len())
			}
			wantParseError(t, err, "r.trec", tc.line, tc.msg)
		})
	}
}

// TestReadRunSemEval checks that SemEval predictions and gold files read
// as rankings by their score column, whatever their rank column says.
func TestReadRunSemEval(t *testing.T) {
	const in = "Q268\tQ268_R4\t4\t0.25\ttrue\nQ268\tQ268_R5\t5\t0.2\tfalse\r\n\nQ269\tQ269_R1\t0\t-1e-3\tfalse\nQ268\tQ268_R1\t1\t1\ttrue\n"
	run, err := ReadRun(strings.NewReader(in), "x.pred")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(run.QueryIDs(), ","); got != "Q268,Q269" {
		t.Errorf("QueryIDs = %s, want Q268,Q269", got)
	}
	want := []Entry{{"Q268_R1", 1, 1, 5}, {"Q268_R4", 0.25, 4, 1}, {"Q268_R5", 0.2, 5, 2}}
	if got := run.Sorted("Q268"); !reflect.DeepEqual(got, want) {
		t.Errorf("Sorted(Q268) = %v, want %v", got, want)
	}
	if got := run.Ranking("Q269"); len(got) != 1 || got[0].Score != -0.001 {
		t.Errorf("Ranking(Q269) = %v", got)
	}
}

// TestWriteSemEvalRoundTrip checks the prediction file WriteSemEval writes:
// its exact form, in the run's own order (the gold file's, for the
// scorer), and that ReadRun reads it back to the same run, ranked the same
// (ties in the order written), and ReadQrels to its labels.
func TestWriteSemEvalRoundTrip(t *testing.T) {
	run := NewRun()
	for _, e := range []Entry{{"Q1_R2", 0.5, 1, 0}, {"Q1_R1", 2, 2, 0}, {"Q1_R3", 0.5, 3, 0}, {"Q1_R4", -1e-20, 4, 0}} {
		run.Add("Q1", e)
	}
	run.Add("Q0", Entry{DocID: "Q0_R1", Score: 1})
	aboveHalf := func(_ string, e Entry) bool { return e.Score > 0.5 }
	var buf bytes.Buffer
	if err := run.WriteSemEval(&buf, aboveHalf); err != nil {
		t.Fatal(err)
	}
	const written = "Q1\tQ1_R2\t0\t0.5\tfalse\n" +
		"Q1\tQ1_R1\t0\t2\ttrue\n" +
		"Q1\tQ1_R3\t0\t0.5\tfalse\n" +
		"Q1\tQ1_R4\t0\t-1e-20\tfalse\n" +
		"Q0\tQ0_R1\t0\t1\ttrue\n"
	if buf.String() != written {
		t.Fatalf("WriteSemEval =\n%s\nwant\n%s", buf.String(), written)
	}

	back, err := ReadRun(strings.NewReader(written), "run.pred")
	if err != nil {
		t.Fatal(err)
	}
	checkReadBack(t, run, back, false)
	labels, err := ReadQrels(strings.NewReader(written), "run.pred")
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := Qrels{"Q1": {"Q1_R1": 1, "Q1_R2": 0, "Q1_R3": 0, "Q1_R4": 0}, "Q0": {"Q0_R1": 1}}
	if !reflect.DeepEqual(labels, wantLabels) {
		t.Errorf("labels read back = %v, want %v", labels, wantLabels)
	}

	// What the scorer could not rank is refused, and nothing written.
	bad := NewRun()
	bad.Add("Q1", Entry{DocID: "Q1_R1", Score: math.NaN()})
	buf.Reset()
	if err := bad.WriteSemEval(&buf, aboveHalf); err == nil || !strings.Contains(err.Error(), "NaN") || buf.Len() > 0 {
		t.Errorf("NaN score: err = %v, wrote %q", err, buf.String())
	}
}

// checkReadBack fails t unless back, read from what run wrote, holds run's
// queries in order, with the same documents and scores, and ranks them as
// run does. sorted says how run was written: as Write writes it, each
// query by score with ranks renumbered from 1; else as WriteSemEval does,
// in the run's own order with rank 0.
func checkReadBack(t *testing.T, run, back Run, sorted bool) {
	t.Helper()
	if !reflect.DeepEqual(back.QueryIDs(), run.QueryIDs()) {
		t.Fatalf("queries read back %v, want %v", back.QueryIDs(), run.QueryIDs())
	}
	for _, qid := range run.QueryIDs() {
		want, wantRank := run.Ranking(qid), func(int) int { return 0 }
		if sorted {
			want, wantRank = run.Sorted(qid), func(i int) int { return i + 1 }
		}
		got := back.Ranking(qid)
		if len(got) != len(want) {
			t.Fatalf("%s: %d entries read back, want %d", qid, len(got), len(want))
		}
		for i := range want {
			if got[i].DocID != want[i].DocID || got[i].Score != want[i].Score || got[i].Rank != wantRank(i) {
				t.Fatalf("%s entry %d read back as %+v, want %+v with rank %d", qid, i, got[i], want[i], wantRank(i))
			}
		}
		for i, e := range back.Sorted(qid) {
			if w := run.Sorted(qid)[i]; e.DocID != w.DocID {
				t.Fatalf("%s ranks %s at %d, want %s", qid, e.DocID, i+1, w.DocID)
			}
		}
	}
}

// TestJudgesNonRelevant checks the test behind leaving AUC out.
func TestJudgesNonRelevant(t *testing.T) {
	for _, tc := range []struct {
		q    Qrels
		want bool
	}{
		{Qrels{"q1": {"a": 1}, "q2": {"b": 2}}, false},
		{Qrels{"q1": {"a": 1}, "q2": {"b": 0}}, true},
		{Qrels{"q1": {"a": -1}}, true},
		{Qrels{}, false},
	} {
		if got := tc.q.JudgesNonRelevant(); got != tc.want {
			t.Errorf("%v.JudgesNonRelevant() = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// TestReadRunBOM checks that a byte order mark opening a run is not read
// as part of its first query id.
func TestReadRunBOM(t *testing.T) {
	run, err := ReadRun(strings.NewReader("\ufeffq1 Q0 a 1 0.5 t\r\nq1 Q0 b 2 0.4 t\r\n"), "r.trec")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(run.QueryIDs(), ","); got != "q1" || len(run.Ranking("q1")) != 2 {
		t.Errorf("QueryIDs = %q with %d entries for q1, want q1 with 2", got, len(run.Ranking("q1")))
	}
}

func TestRunSetAndFilter(t *testing.T) {
	var run Run // the zero Run is usable
	run.Add("q1", Entry{DocID: "a", Score: 1})
	run.Set("q2", []Entry{{DocID: "b", Score: 2}})
	run.Set("q1", []Entry{{DocID: "c", Score: 3}})
	if got := strings.Join(run.QueryIDs(), ","); got != "q1,q2" {
		t.Errorf("QueryIDs = %s, want q1,q2", got)
	}
	if r := run.Ranking("q1"); len(r) != 1 || r[0].DocID != "c" {
		t.Errorf("Set did not replace q1: %v", r)
	}
	f := run.Filter(func(qid string) bool { return qid == "q2" })
	if f.Len() != 1 || f.Ranking("q2")[0].DocID != "b" || run.Len() != 2 {
		t.Errorf("Filter = %v (original %d queries)", f.QueryIDs(), run.Len())
	}
}

// TestRunAppendsDoNotAlias checks that a run made from another's entries
// (Filter, Set with Ranking) and the original can each Add to a query
// without the other's entry overwriting it in a shared backing array.
func TestRunAppendsDoNotAlias(t *testing.T) {
	tests := []struct {
		name string
		copy func(Run) Run
	}{
		{"Filter", func(r Run) Run { return r.Filter(func(string) bool { return true }) }},
		{"Set from Ranking", func(r Run) Run { c := NewRun(); c.Set("q1", r.Ranking("q1")); return c }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := NewRun()
			for _, d := range []string{"a", "b", "c"} {
				orig.Add("q1", Entry{DocID: d})
			}
			c := tc.copy(orig)
			c.Add("q1", Entry{DocID: "copy"})
			orig.Add("q1", Entry{DocID: "orig"})
			ids := func(r Run) string {
				var s []string
				for _, e := range r.Ranking("q1") {
					s = append(s, e.DocID)
				}
				return strings.Join(s, ",")
			}
			if got := ids(c); got != "a,b,c,copy" {
				t.Errorf("copy = %s, want a,b,c,copy", got)
			}
			if got := ids(orig); got != "a,b,c,orig" {
				t.Errorf("original = %s, want a,b,c,orig", got)
			}
		})
	}
}

func TestJudgesRelevant(t *testing.T) {
	for _, tc := range []struct {
		q    Qrels
		want bool
	}{
		{Qrels{"q1": {"a": 0}, "q2": {"b": 2}}, true},
		{Qrels{"q1": {"a": 0}, "q2": {"b": -1}}, false},
		{Qrels{}, false},
	} {
		if got := tc.q.JudgesRelevant(); got != tc.want {
			t.Errorf("%v.JudgesRelevant() = %v, want %v", tc.q, got, tc.want)
		}
	}
}
