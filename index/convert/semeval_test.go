package convert

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
)

const (
	devSlice  = "../../testdata/semeval/dev-slice.xml"
	slice2015 = "../../testdata/semeval/2015-dev-slice.xml"
)

// convertFiles converts files for subtask st, failing the test on error.
func convertFiles(t *testing.T, st Subtask, files ...string) *dataset.Dataset {
	t.Helper()
	c := NewSemEval(st)
	for _, f := range files {
		if err := c.AddFile(f); err != nil {
			t.Fatal(err)
		}
	}
	return c.Dataset()
}

func ids[T any](xs []T, id func(T) string) string {
	var out []string
	for _, x := range xs {
		out = append(out, id(x))
	}
	return strings.Join(out, " ")
}

func docIDs(ds *dataset.Dataset) string {
	return ids(ds.Corpus, func(d dataset.Doc) string { return d.ID })
}
func queryIDs(ds *dataset.Dataset) string {
	return ids(ds.Queries, func(q dataset.Query) string { return q.ID })
}

// saveAndLoad saves ds to a new directory and loads it back.
func saveAndLoad(t *testing.T, ds *dataset.Dataset) *dataset.Dataset {
	t.Helper()
	dir := t.TempDir()
	if err := ds.Save(dir); err != nil {
		t.Fatal(err)
	}
	back, err := dataset.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// candidates renders qid's given candidates as "id:rank:score ...".
func candidates(ds *dataset.Dataset, qid string) string {
	return ids(ds.Candidates.Ranking(qid), func(e dataset.Entry) string {
		return fmt.Sprintf("%s:%d:%.4g", e.DocID, e.Rank, e.Score)
	})
}

func TestSemEvalSubtaskB(t *testing.T) {
	ds := convertFiles(t, SubtaskB, devSlice)

	if got := queryIDs(ds); got != "Q268 Q269" {
		t.Errorf("queries = %s", got)
	}
	q, _ := ds.Query("Q268")
	if q.Title != "Good Bank" || q.Text != "Which is a good bank as per your experience in Doha" {
		t.Errorf("query Q268 = %+v", q)
	}
	if got, want := docIDs(ds), "Q268_R4 Q268_R16 Q268_R27 Q269_R3 Q269_R10 Q269_R20"; got != want {
		t.Errorf("documents = %s, want %s", got, want)
	}
	d, _ := ds.Doc("Q268_R16")
	if d.Title != "Best Bank." || d.Text != "Hi ti all QL's; What bank you are using? and why? Are you using this bank just because it has an affiliate at home? Regards;" {
		t.Errorf("document Q268_R16 = %q / %q", d.Title, d.Text)
	}
	wantMeta := map[string]any{
		"category": "Moving to Qatar", "date": "2013-07-31 02:27:08", "user_id": "U5151",
		"user_name": "shehabi", "ranking_order": 16.0, "comments": 10,
	}
	// The thread's ten comments, cleaned, one per line.
	thread, _ := d.Metadata["thread_text"].(string)
	if lines := strings.Split(thread, "\n"); len(lines) != 10 || !strings.Contains(thread, "build a relationship") {
		t.Errorf("Q268_R16 thread_text has %d lines: %q", len(lines), thread)
	}
	delete(d.Metadata, "thread_text")
	if !reflect.DeepEqual(d.Metadata, wantMeta) {
		t.Errorf("Q268_R16 metadata = %v, want %v", d.Metadata, wantMeta)
	}

	// Candidates in RELQ_RANKING_ORDER, score 1/rank; Skip threads belong
	// to subtask B like any other.
	if got, want := candidates(ds, "Q268"), "Q268_R4:1:1 Q268_R16:2:0.5 Q268_R27:3:0.3333"; got != want {
		t.Errorf("Q268 candidates = %s, want %s", got, want)
	}
	if got, want := candidates(ds, "Q269"), "Q269_R3:1:1 Q269_R10:2:0.5 Q269_R20:3:0.3333"; got != want {
		t.Errorf("Q269 candidates = %s, want %s", got, want)
	}
	// PerfectMatch 2, Relevant 1, Irrelevant 0.
	wantQrels := dataset.Qrels{
		"Q268": {"Q268_R4": 2, "Q268_R16": 1, "Q268_R27": 0},
		"Q269": {"Q269_R3": 1, "Q269_R10": 0, "Q269_R20": 0},
	}
	if !reflect.DeepEqual(ds.Qrels, wantQrels) {
		t.Errorf("qrels = %v, want %v", ds.Qrels, wantQrels)
	}
}

func TestSemEvalSubtaskA(t *testing.T) {
	ds := convertFiles(t, SubtaskA, devSlice)

	// Q268_R4, Q268_R27 and Q269_R20 carry the Skip attribute.
	if got, want := queryIDs(ds), "Q268_R16 Q269_R3 Q269_R10"; got != want {
		t.Errorf("queries = %s, want %s", got, want)
	}
	q, _ := ds.Query("Q269_R3")
	if q.Title != "Where is the best place to catch fish in Qatar ?" || !strings.HasPrefix(q.Text, "I really would like to know where the best place") {
		t.Errorf("query Q269_R3 = %q / %q", q.Title, q.Text)
	}
	wantQMeta := map[string]any{
		"category": "Sightseeing and Tourist attractions", "date": "2007-03-27 14:56:42",
		"user_id": "U5154", "user_name": "Husam Abonaadj", "comments": 10,
	}
	if !reflect.DeepEqual(q.Metadata, wantQMeta) {
		t.Errorf("Q269_R3 metadata = %v, want %v", q.Metadata, wantQMeta)
	}
	if len(ds.Corpus) != 30 {
		t.Errorf("%d documents, want 30 (three threads of ten comments)", len(ds.Corpus))
	}
	for _, skipped := range []string{"Q268_R4_C1", "Q268_R27_C10", "Q269_R20_C5"} {
		if _, ok := ds.Doc(skipped); ok {
			t.Errorf("comment %s of a Skip thread was converted", skipped)
		}
	}
	d, _ := ds.Doc("Q268_R16_C6")
	if !strings.HasPrefix(d.Text, "WesternInDoha; that's the information that I am looking for") || d.Title != "" {
		t.Errorf("Q268_R16_C6 = %q / %q", d.Title, d.Text)
	}
	wantMeta := map[string]any{
		"date": "2013-08-02 06:38:26", "user_id": "U5151", "user_name": "shehabi",
		"position": 6, "thread_size": 10, "question_id": "Q268_R16", "question_user_id": "U5151",
		"question_date": "2013-07-31 02:27:08", "category": "Moving to Qatar", "by_question_author": true,
	}
	if !reflect.DeepEqual(d.Metadata, wantMeta) {
		t.Errorf("Q268_R16_C6 metadata = %v, want %v", d.Metadata, wantMeta)
	}
	if d, _ := ds.Doc("Q268_R16_C1"); d.Metadata["by_question_author"] != false || d.Metadata["user_id"] != "U65" || d.Metadata["position"] != 1 {
		t.Errorf("Q268_R16_C1 metadata = %v", d.Metadata)
	}

	// Thread order is the given order.
	var want []string
	for i := 1; i <= 10; i++ {
		want = append(want, fmt.Sprintf("Q268_R16_C%d:%d:%.4g", i, i, 1/float64(i)))
	}
	if got := candidates(ds, "Q268_R16"); got != strings.Join(want, " ") {
		t.Errorf("Q268_R16 candidates = %s", got)
	}
	// Good 1; PotentiallyUseful and Bad 0. The thread is BBBGGPPBBG.
	wantQrels := map[string]int{}
	for i, l := range "BBBGGPPBBG" {
		wantQrels[fmt.Sprintf("Q268_R16_C%d", i+1)] = map[rune]int{'G': 1}[l]
	}
	if !reflect.DeepEqual(ds.Qrels["Q268_R16"], wantQrels) {
		t.Errorf("Q268_R16 qrels = %v, want %v", ds.Qrels["Q268_R16"], wantQrels)
	}

	// Scored in the given order: Good at positions 4, 5 and 10.
	res, err := eval.Evaluate(ds.Qrels, *ds.Candidates, eval.MustParseMetrics("map@10,mrr@10"))
	if err != nil {
		t.Fatal(err)
	}
	if ap := res.PerQuery["Q268_R16"]; ap[0] != (1.0/4+2.0/5+3.0/10)/3 || ap[1] != 1.0/4 {
		t.Errorf("Q268_R16 AP, RR = %v", ap)
	}
}

func TestSemEval2015Threads(t *testing.T) {
	ds := convertFiles(t, SubtaskA, slice2015)
	// Q2657 has no comments: nothing to rank, so no query.
	if got := queryIDs(ds); got != "Q2481 Q2482" {
		t.Errorf("queries = %s, want Q2481 Q2482", got)
	}
	if n := len(ds.Candidates.Ranking("Q2481")); n != 14 {
		t.Errorf("Q2481 has %d candidates, want 14", n)
	}
	want := map[string]int{"Q2481_C2": 1, "Q2481_C12": 1, "Q2481_C14": 1, "Q2481_C13": 0, "Q2481_C1": 0}
	for did, g := range want {
		if got, ok := ds.Qrels["Q2481"][did]; !ok || got != g {
			t.Errorf("qrels Q2481 %s = %d, %v; want %d", did, got, ok, g)
		}
	}
	if d, _ := ds.Doc("Q2481_C11"); d.Metadata["by_question_author"] != true || d.Metadata["position"] != 11 || d.Metadata["thread_size"] != 14 {
		t.Errorf("Q2481_C11 metadata = %v", d.Metadata)
	}
	if d, _ := ds.Doc("Q2482_C2"); d.Text != "hi heart..how r u doing today?" || d.Metadata["category"] != "Socialising" {
		t.Errorf("Q2482_C2 = %+v", d)
	}

	// The 2015 files hold no original questions: nothing for subtask B.
	err := NewSemEval(SubtaskB).AddFile(slice2015)
	if err == nil || !strings.Contains(err.Error(), "no subtask B queries") || !strings.Contains(err.Error(), slice2015) {
		t.Errorf("subtask B of 2015 threads: error %v", err)
	}
}

func TestSemEvalMerge(t *testing.T) {
	ds := convertFiles(t, SubtaskA, devSlice, slice2015)
	if got, want := queryIDs(ds), "Q268_R16 Q269_R3 Q269_R10 Q2481 Q2482"; got != want {
		t.Errorf("merged queries = %s, want %s", got, want)
	}
	if len(ds.Corpus) != 30+14+2 || len(ds.Qrels) != 5 || ds.Candidates.Len() != 5 {
		t.Errorf("merged: %d documents, %d judged, %d with candidates", len(ds.Corpus), len(ds.Qrels), ds.Candidates.Len())
	}
	// The merged dataset saves and loads back as a consistent BEIR directory.
	back := saveAndLoad(t, ds)
	if queryIDs(back) != queryIDs(ds) || docIDs(back) != docIDs(ds) || !reflect.DeepEqual(back.Qrels, ds.Qrels) ||
		candidates(back, "Q2481") != candidates(ds, "Q2481") {
		t.Error("merged dataset changed through Save and dataset.Load")
	}

	// Subtask B: one original question split over two files keeps one query
	// and gathers its candidates, ordered by RELQ_RANKING_ORDER.
	data, err := os.ReadFile(devSlice)
	if err != nil {
		t.Fatal(err)
	}
	first, second := splitAfter(t, data, "Q268_R16")
	c := NewSemEval(SubtaskB)
	if err := c.Add(bytes.NewReader(second), "second.xml"); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(bytes.NewReader(first), "first.xml"); err != nil {
		t.Fatal(err)
	}
	ds = c.Dataset()
	if got := queryIDs(ds); got != "Q268 Q269" {
		t.Errorf("queries = %s", got)
	}
	if got, want := candidates(ds, "Q268"), "Q268_R4:1:1 Q268_R16:2:0.5 Q268_R27:3:0.3333"; got != want {
		t.Errorf("Q268 candidates = %s, want %s", got, want)
	}
}

// splitAfter cuts a 2016 XML file into two well-formed files after the
// OrgQuestion block holding thread seq.
func splitAfter(t *testing.T, data []byte, seq string) (first, second []byte) {
	t.Helper()
	i := bytes.Index(data, []byte(`THREAD_SEQUENCE="`+seq+`"`))
	end := []byte("</OrgQuestion>\r\n")
	j := bytes.Index(data[i:], end)
	if i < 0 || j < 0 {
		t.Fatalf("no thread %s", seq)
	}
	cut := i + j + len(end)
	head := data[:bytes.Index(data, []byte("<OrgQuestion "))]
	first = append(append([]byte{}, data[:cut]...), "</xml>\r\n"...)
	second = append(append([]byte{}, head...), data[cut:]...)
	return first, second
}

func TestSemEvalUnlabelled(t *testing.T) {
	data, err := os.ReadFile(devSlice)
	if err != nil {
		t.Fatal(err)
	}
	// The test set's form: every label is "?".
	unlabelled := regexp.MustCompile(`(RELQ_RELEVANCE2ORGQ|RELC_RELEVANCE2RELQ|RELC_RELEVANCE2ORGQ)="[^"]*"`).
		ReplaceAll(data, []byte(`$1="?"`))
	for _, st := range []Subtask{SubtaskA, SubtaskB} {
		c := NewSemEval(st)
		if err := c.Add(bytes.NewReader(unlabelled), "test.xml"); err != nil {
			t.Fatal(err)
		}
		ds := c.Dataset()
		if ds.Qrels != nil {
			t.Errorf("subtask %s: qrels %v from unlabelled input", st, ds.Qrels)
		}
		if ds.Candidates.Len() != len(ds.Queries) || len(ds.Queries) == 0 {
			t.Errorf("subtask %s: %d queries, %d with candidates", st, len(ds.Queries), ds.Candidates.Len())
		}
		if back := saveAndLoad(t, ds); back.Qrels != nil {
			t.Errorf("subtask %s: qrels file written for unlabelled input", st)
		}
	}
}

// TestSemEvalSubtaskAFile: the task also distributed each split for
// subtask A alone (SemEval2016-Task3-CQA-QL-dev-subtaskA.xml and the
// like): the threads without their OrgQuestion blocks, the repeated ones
// left out, no original-question attributes. Its test split, unlabelled,
// converts to the queries, documents and candidates of the full file's
// subtask A, so either file scores a pipeline alike.
func TestSemEvalSubtaskAFile(t *testing.T) {
	data, err := os.ReadFile(devSlice)
	if err != nil {
		t.Fatal(err)
	}
	var threads [][]byte
	for _, th := range regexp.MustCompile(`(?s)<Thread .*?</Thread>`).FindAll(data, -1) {
		if bytes.Contains(th, []byte("SubtaskA_Skip_Because_Same_As_RelQuestion_ID")) {
			continue
		}
		th = regexp.MustCompile(` (RELQ_RANKING_ORDER|RELQ_RELEVANCE2ORGQ|RELC_RELEVANCE2ORGQ)="[^"]*"`).ReplaceAll(th, nil)
		threads = append(threads, regexp.MustCompile(`RELC_RELEVANCE2RELQ="[^"]*"`).ReplaceAll(th, []byte(`RELC_RELEVANCE2RELQ="?"`)))
	}
	if len(threads) != 3 {
		t.Fatalf("%d threads in the slice's subtask A form, want 3", len(threads))
	}
	in := "<?xml version=\"1.0\" encoding=\"utf-8\"?>\r\n<xml version=\"1.0\">\r\n" + string(bytes.Join(threads, []byte("\r\n"))) + "\r\n</xml>\r\n"
	c := NewSemEval(SubtaskA)
	if err := c.Add(strings.NewReader(in), "dev-subtaskA.xml"); err != nil {
		t.Fatal(err)
	}
	got, want := c.Dataset(), convertFiles(t, SubtaskA, devSlice)
	if got.Qrels != nil {
		t.Errorf("qrels %v from unlabelled input", got.Qrels)
	}
	if !reflect.DeepEqual(got.Queries, want.Queries) || !reflect.DeepEqual(got.Corpus, want.Corpus) {
		t.Errorf("queries %s, documents %s; want %s, %s", queryIDs(got), docIDs(got), queryIDs(want), docIDs(want))
	}
	for _, q := range want.Queries {
		if g, w := candidates(got, q.ID), candidates(want, q.ID); g != w {
			t.Errorf("%s candidates = %s, want %s", q.ID, g, w)
		}
	}
}

func TestSemEvalCandidateOrder(t *testing.T) {
	// Threads out of ranking order, one order repeated: candidates follow
	// RELQ_RANKING_ORDER, ties keep file order.
	const in = `<xml>
<OrgQuestion ORGQ_ID="Q1"><OrgQSubject>s</OrgQSubject><OrgQBody>b</OrgQBody>
 <Thread THREAD_SEQUENCE="Q1_R9"><RelQuestion RELQ_ID="Q1_R9" RELQ_RANKING_ORDER="9" RELQ_RELEVANCE2ORGQ="Relevant"><RelQSubject>a</RelQSubject><RelQBody>x</RelQBody></RelQuestion></Thread></OrgQuestion>
<OrgQuestion ORGQ_ID="Q1"><OrgQSubject>s</OrgQSubject><OrgQBody>b</OrgQBody>
 <Thread THREAD_SEQUENCE="Q1_R2"><RelQuestion RELQ_ID="Q1_R2" RELQ_RANKING_ORDER="2" RELQ_RELEVANCE2ORGQ="?"><RelQSubject>a</RelQSubject><RelQBody>x</RelQBody></RelQuestion></Thread></OrgQuestion>
<OrgQuestion ORGQ_ID="Q1"><OrgQSubject>s</OrgQSubject><OrgQBody>b</OrgQBody>
 <Thread THREAD_SEQUENCE="Q1_R10"><RelQuestion RELQ_ID="Q1_R10" RELQ_RANKING_ORDER="9" RELQ_RELEVANCE2ORGQ="Irrelevant"><RelQSubject>a</RelQSubject><RelQBody>x</RelQBody></RelQuestion></Thread></OrgQuestion>
</xml>`
	c := NewSemEval(SubtaskB)
	if err := c.Add(strings.NewReader(in), "order.xml"); err != nil {
		t.Fatal(err)
	}
	ds := c.Dataset()
	if got, want := candidates(ds, "Q1"), "Q1_R2:1:1 Q1_R9:2:0.5 Q1_R10:3:0.3333"; got != want {
		t.Errorf("candidates = %s, want %s", got, want)
	}
	// "?" leaves Q1_R2 unjudged while its neighbours are judged.
	if want := (dataset.Qrels{"Q1": {"Q1_R9": 1, "Q1_R10": 0}}); !reflect.DeepEqual(ds.Qrels, want) {
		t.Errorf("qrels = %v, want %v", ds.Qrels, want)
	}
}

func TestSemEvalErrors(t *testing.T) {
	data, err := os.ReadFile(devSlice)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	upTo := func(n int, extra string) []byte { // the first n-1 lines, then extra
		return append(bytes.Join(lines[:n-1], nil), extra...)
	}
	replace := func(old, new string) []byte { return bytes.Replace(data, []byte(old), []byte(new), 1) }

	tests := []struct {
		name string
		st   Subtask
		in   []byte
		line int
		msg  string
	}{
		{"truncated inside a question", SubtaskB, upTo(120, "\t\t<RelComment RELC_ID=\"Q268_R16_C4\" RELC_DA"), 120, "unexpected EOF"},
		{"truncated between questions", SubtaskA, upTo(147, ""), 147, "unexpected EOF"},
		{"truncated in the DTD", SubtaskB, upTo(20, "RELQ_ID CDATA"), 20, "unexpected EOF"},
		{"mismatched tag", SubtaskB, replace("Doha</OrgQBody>", "Doha</OrgQBodx>"), 45, "malformed OrgQuestion"},
		{"unknown B label", SubtaskB, replace(`RELQ_RELEVANCE2ORGQ="Irrelevant"`, `RELQ_RELEVANCE2ORGQ="Unrelated"`), 147, `label "Unrelated"`},
		{"unknown A label", SubtaskA, replace(`"arman1arzoo" RELC_RELEVANCE2ORGQ="Bad" RELC_RELEVANCE2RELQ="Bad"`, `"arman1arzoo" RELC_RELEVANCE2ORGQ="Bad" RELC_RELEVANCE2RELQ="Awful"`), 95, `label "Awful"`},
		{"bad ranking order", SubtaskB, replace(`RELQ_RANKING_ORDER="16"`, `RELQ_RANKING_ORDER="sixteen"`), 95, "RELQ_RANKING_ORDER"},
		{"NaN ranking order", SubtaskB, replace(`RELQ_RANKING_ORDER="16"`, `RELQ_RANKING_ORDER="NaN"`), 95, "RELQ_RANKING_ORDER"},
		{"no ORGQ_ID", SubtaskB, replace(`ORGQ_ID="Q268"`, `ORGQ_ID=""`), 43, "ORGQ_ID: empty id"},
		{"space in RELQ_ID", SubtaskB, replace(`RELQ_ID="Q268_R4"`, `RELQ_ID="Q268 R4"`), 43, "white space"},
		{"space in RELC_ID", SubtaskA, replace(`RELC_ID="Q268_R16_C3"`, `RELC_ID="Q268_R16 C3"`), 95, "white space"},
		{"not XML", SubtaskA, []byte("query\tdoc\t1\n"), 0, "no subtask A queries"},
		{"empty", SubtaskB, nil, 0, "no subtask B queries"},
		{"only Skip threads for A", SubtaskA, upTo(95, "</xml>\r\n"), 0, "no subtask A queries"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := NewSemEval(tc.st).Add(bytes.NewReader(tc.in), "data/dev.xml")
			var pe *dataset.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *dataset.ParseError", err, err)
			}
			if pe.Line != tc.line || pe.File != "data/dev.xml" || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q: want data/dev.xml:%d and %q", err, tc.line, tc.msg)
			}
			if tc.line > 0 && !strings.HasPrefix(err.Error(), fmt.Sprintf("data/dev.xml:%d: ", tc.line)) {
				t.Errorf("error %q does not start with file:line", err)
			}
		})
	}
	if err := NewSemEval(SubtaskA).AddFile(filepath.Join(t.TempDir(), "missing.xml")); err == nil {
		t.Error("AddFile of a missing file succeeded")
	}
}

func TestParseSubtask(t *testing.T) {
	for in, want := range map[string]Subtask{"A": SubtaskA, "a": SubtaskA, " B ": SubtaskB, "b": SubtaskB} {
		if got, err := ParseSubtask(in); err != nil || got != want {
			t.Errorf("ParseSubtask(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "C", "AB"} {
		if _, err := ParseSubtask(in); err == nil {
			t.Errorf("ParseSubtask(%q) succeeded", in)
		}
	}
}

// TestSemEvalRobust: forms the held-out test file may take that the
// released files do not show. Each input is a one-question file.
func TestSemEvalRobust(t *testing.T) {
	const bom = "\ufeff"
	orgq := func(threads ...string) string {
		return `<?xml version="1.0" encoding="utf-8"?>` + "\n<xml>\n" +
			`<OrgQuestion ORGQ_ID="Q1"><OrgQSubject>org subject</OrgQSubject><OrgQBody>org body</OrgQBody>` +
			strings.Join(threads, "") + "</OrgQuestion>\n</xml>\n"
	}
	thread := func(n int, relq, comment string) string {
		s := fmt.Sprintf(`<Thread THREAD_SEQUENCE="Q1_R%d">%s`, n, relq)
		for i := 1; i <= 2; i++ {
			s += fmt.Sprintf(`<RelComment RELC_ID="Q1_R%d_C%d" RELC_RELEVANCE2RELQ="?" RELC_RELEVANCE2ORGQ="?">`+
				`<RelCText>%s</RelCText></RelComment>`, n, i, comment)
		}
		return s + "</Thread>"
	}
	relq := func(n int, subject, body string) string {
		return fmt.Sprintf(`<RelQuestion RELQ_ID="Q1_R%d" RELQ_RANKING_ORDER="%d" RELQ_RELEVANCE2ORGQ="?">`+
			`<RelQSubject>%s</RelQSubject><RelQBody>%s</RelQBody></RelQuestion>`, n, n, subject, body)
	}
	plain := thread(1, relq(1, "subject", "body"), "comment")
	tests := []struct {
		name        string
		in          string
		relqTitle   string // subtask B document Q1_R1
		relqText    string
		commentText string // subtask A document Q1_R1_C1
		bCands      string // subtask B candidates of Q1
	}{
		{"plain", orgq(plain), "subject", "body", "comment", "Q1_R1"},
		{"BOM and CRLF", bom + strings.ReplaceAll(orgq(thread(1, relq(1, "subject", "line one\nline two"), "comment")), "\n", "\r\n"),
			"subject", "line one\nline two", "comment", "Q1_R1"},
		{"attribute order, optional attributes absent",
			orgq(`<Thread THREAD_SEQUENCE="Q1_R1"><RelQuestion RELQ_RELEVANCE2ORGQ="?" RELQ_RANKING_ORDER="1" RELQ_ID="Q1_R1">` +
				`<RelQSubject>subject</RelQSubject><RelQBody>body</RelQBody></RelQuestion>` +
				`<RelComment RELC_RELEVANCE2RELQ="?" RELC_ID="Q1_R1_C1"><RelCText>comment</RelCText></RelComment></Thread>`),
			"subject", "body", "comment", "Q1_R1"},
		{"empty subject and body", orgq(thread(1, `<RelQuestion RELQ_ID="Q1_R1" RELQ_RANKING_ORDER="1"><RelQSubject/><RelQBody></RelQBody></RelQuestion>`, "")),
			"", "", "", "Q1_R1"},
		{"XML and doubly escaped entities", orgq(thread(1, relq(1, "a &amp; b", "it&amp;#39;s &lt;fine&gt; &#233;"), "x &quot;y&quot;")),
			"a & b", "it&#39;s <fine> é", `x "y"`, "Q1_R1"},
		{"HTML entity", orgq(thread(1, relq(1, "a&nbsp;b", "caf&eacute;"), "c&nbsp;d")),
			"a\u00a0b", "café", "c\u00a0d", "Q1_R1"},
		{"markup inside texts", orgq(thread(1, relq(1, "a <b>bold</b> word", "one<br/>two"), "see <a href=\"x\">this link</a>")),
			"a  bold  word", "one  two", "see  this link", "Q1_R1"},
		{"several threads in one question", orgq(thread(2, relq(2, "second", "b2"), "c2"), plain),
			"subject", "body", "comment", "Q1_R1 Q1_R2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewSemEval(SubtaskB)
			if err := b.Add(strings.NewReader(tc.in), "test.xml"); err != nil {
				t.Fatalf("subtask B: %v", err)
			}
			ds := b.Dataset()
			if q, _ := ds.Query("Q1"); q.Title != "org subject" || q.Text != "org body" {
				t.Errorf("query Q1 = %q / %q", q.Title, q.Text)
			}
			if d, ok := ds.Doc("Q1_R1"); !ok || d.Title != tc.relqTitle || d.Text != tc.relqText {
				t.Errorf("document Q1_R1 = %q / %q, %v; want %q / %q", d.Title, d.Text, ok, tc.relqTitle, tc.relqText)
			}
			if got := ids(ds.Candidates.Ranking("Q1"), func(e dataset.Entry) string { return e.DocID }); got != tc.bCands {
				t.Errorf("subtask B candidates %s, want %s", got, tc.bCands)
			}
			if ds.Qrels != nil {
				t.Errorf("qrels %v from unlabelled input", ds.Qrels)
			}

			a := NewSemEval(SubtaskA)
			if err := a.Add(strings.NewReader(tc.in), "test.xml"); err != nil {
				t.Fatalf("subtask A: %v", err)
			}
			ds = a.Dataset()
			if q, ok := ds.Query("Q1_R1"); !ok || q.Title != tc.relqTitle || q.Text != tc.relqText {
				t.Errorf("subtask A query Q1_R1 = %q / %q, %v", q.Title, q.Text, ok)
			}
			if d, ok := ds.Doc("Q1_R1_C1"); !ok || d.Text != tc.commentText {
				t.Errorf("comment Q1_R1_C1 = %q, %v; want %q", d.Text, ok, tc.commentText)
			}
			if len(ds.Queries) != strings.Count(tc.bCands, " ")+1 {
				t.Errorf("subtask A: %d queries, want one per thread", len(ds.Queries))
			}
		})
	}
}

// TestSemEvalClashes: a file read twice repeats every id with the same
// text, which is no clash; an id repeated with another text is reported,
// and the first record kept.
func TestSemEvalClashes(t *testing.T) {
	data, err := os.ReadFile(devSlice)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []Subtask{SubtaskA, SubtaskB} {
		c := NewSemEval(st)
		for range 2 {
			if err := c.Add(bytes.NewReader(data), "dev-slice.xml"); err != nil {
				t.Fatal(err)
			}
		}
		if got := c.Clashes(); len(got) != 0 {
			t.Errorf("subtask %s, one file twice: clashes %v", st, got)
		}
	}
	// The same comment id, another text.
	i := bytes.Index(data, []byte(`RELC_ID="Q268_R16_C1"`))
	j := bytes.Index(data[i:], []byte("<RelCText>"))
	if i < 0 || j < 0 {
		t.Fatal("no comment Q268_R16_C1")
	}
	changed := append(append(append([]byte{}, data[:i+j+len("<RelCText>")]...), "CHANGED "...), data[i+j+len("<RelCText>"):]...)
	c := NewSemEval(SubtaskA)
	for _, d := range [][]byte{data, changed} {
		if err := c.Add(bytes.NewReader(d), "dev-slice.xml"); err != nil {
			t.Fatal(err)
		}
	}
	// Subtask A reads a thread seen before no further than its question.
	if got := c.Clashes(); len(got) != 0 {
		t.Errorf("a repeated thread's comments are not read again, yet: %v", got)
	}
	// Two comments of one thread under one id.
	c = NewSemEval(SubtaskA)
	if err := c.Add(bytes.NewReader(bytes.Replace(data, []byte(`RELC_ID="Q268_R16_C2"`), []byte(`RELC_ID="Q268_R16_C1"`), 1)), "dev-slice.xml"); err != nil {
		t.Fatal(err)
	}
	if got := c.Clashes(); len(got) != 1 || !strings.Contains(got[0], "document Q268_R16_C1 appears twice") {
		t.Errorf("a comment id twice in a thread: clashes %v", got)
	}
	c = NewSemEval(SubtaskB)
	for _, d := range [][]byte{data, bytes.Replace(data, []byte("<OrgQSubject>"), []byte("<OrgQSubject>CHANGED "), 1)} {
		if err := c.Add(bytes.NewReader(d), "dev-slice.xml"); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Clashes(); len(got) != 1 || !strings.Contains(got[0], "query Q268 appears twice with different texts") {
		t.Errorf("an original question with another text: clashes %v", got)
	}
}

// TestSemEvalLabelClashes: a document judged twice for one query with
// different labels keeps its first label, as a repeated id keeps its
// first record, and the clash is reported.
func TestSemEvalLabelClashes(t *testing.T) {
	data, err := os.ReadFile(devSlice)
	if err != nil {
		t.Fatal(err)
	}
	relabel := func(old, new string) []byte {
		if !bytes.Contains(data, []byte(old)) {
			t.Fatalf("no %s in %s", old, devSlice)
		}
		return bytes.Replace(data, []byte(old), []byte(new), 1)
	}
	tests := []struct {
		name     string
		st       Subtask
		files    [][]byte
		qid, did string
		want     int
	}{
		{
			"B: a related question relabelled in a second file",
			SubtaskB,
			[][]byte{data, relabel(`RELQ_RELEVANCE2ORGQ="PerfectMatch"`, `RELQ_RELEVANCE2ORGQ="Irrelevant"`)},
			"Q268", "Q268_R4", 2,
		},
		{
			"A: two comments of a thread under one id",
			SubtaskA,
			[][]byte{relabel(`RELC_ID="Q268_R16_C4"`, `RELC_ID="Q268_R16_C3"`)},
			"Q268_R16", "Q268_R16_C3", 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewSemEval(tc.st)
			for _, f := range tc.files {
				if err := c.Add(bytes.NewReader(f), "dev-slice.xml"); err != nil {
					t.Fatal(err)
				}
			}
			if got, ok := c.Dataset().Qrels[tc.qid][tc.did]; !ok || got != tc.want {
				t.Errorf("grade of %s for %s = %d, %v; want the first label's %d", tc.did, tc.qid, got, ok, tc.want)
			}
			found := false
			for _, cl := range c.Clashes() {
				found = found || strings.Contains(cl, "document "+tc.did+" judged twice for query "+tc.qid+" with different labels")
			}
			if !found {
				t.Errorf("clashes %q do not report the labels", c.Clashes())
			}
		})
	}
}
