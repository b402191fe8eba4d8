package dataset

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func TestReadCorpus(t *testing.T) {
	const in = `{"_id":"d1","title":"Best Bank","text":"Which bank?","metadata":{"user_id":"U4882","position":3}}` + "\r\n" +
		"\n" +
		`{"_id":"d2","text":"no title"}` + "\n"
	want := []Doc{
		{ID: "d1", Title: "Best Bank", Text: "Which bank?", Metadata: map[string]any{"user_id": "U4882", "position": 3.0}},
		{ID: "d2", Text: "no title"},
	}
	// A UTF-8 byte order mark opening the file is skipped.
	for _, prefix := range []string{"", "\ufeff"} {
		docs, err := ReadCorpus(strings.NewReader(prefix+in), "corpus.jsonl")
		if err != nil {
			t.Fatalf("prefix %q: %v", prefix, err)
		}
		if !reflect.DeepEqual(docs, want) {
			t.Errorf("prefix %q: ReadCorpus = %#v, want %#v", prefix, docs, want)
		}
	}
	docs, _ := ReadCorpus(strings.NewReader(in), "corpus.jsonl")
	if got := docs[0].FullText(); got != "Best Bank\nWhich bank?" {
		t.Errorf("FullText = %q", got)
	}
	if got := docs[1].FullText(); got != "no title" {
		t.Errorf("FullText without title = %q", got)
	}
	// Bytes that are not UTF-8 are refused in an id only (see
	// jsonlErrors); in a text they read as U+FFFD, and an id may hold a
	// U+FFFD written as such.
	docs, err := ReadCorpus(strings.NewReader("{\"_id\":\"a\ufffd\",\"text\":\"caf\xe9\"}\n"), "corpus.jsonl")
	if err != nil || docs[0].ID != "a\ufffd" || docs[0].Text != "caf\ufffd" {
		t.Errorf("ReadCorpus = %+v, %v", docs, err)
	}
}

func TestReadQueries(t *testing.T) {
	const in = `{"_id":"Q268","title":"Good Bank","text":"Which is a good bank"}` + "\n" + `{"_id":"Q269","text":"visa"}`
	qs, err := ReadQueries(strings.NewReader(in), "queries.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []Query{{ID: "Q268", Title: "Good Bank", Text: "Which is a good bank"}, {ID: "Q269", Text: "visa"}}
	if !reflect.DeepEqual(qs, want) {
		t.Errorf("ReadQueries = %#v, want %#v", qs, want)
	}
	if got := qs[0].FullText(); got != "Good Bank\nWhich is a good bank" {
		t.Errorf("FullText = %q", got)
	}
	if got := (Query{Title: "only title"}).FullText(); got != "only title" {
		t.Errorf("FullText without text = %q", got)
	}
}

// jsonlErrors are malformed inputs both JSONL readers must refuse.
var jsonlErrors = []struct {
	name, in string
	line     int
	msg      string
}{
	{"broken line", `{"_id":"a","text":"x"}` + "\n" + `{"_id":"b","text":"x"` + "\n", 2, "invalid JSON"},
	{"trailing garbage", `{"_id":"a","text":"x"}]` + "\n", 1, "invalid JSON"},
	{"two values", `{"_id":"a"} {"_id":"b"}` + "\n", 1, "invalid JSON"},
	{"not an object", "\n\n[1,2]\n", 3, "invalid JSON"},
	{"numeric id", `{"_id":7,"text":"x"}` + "\n", 1, `invalid JSON: "_id" is a JSON number, want a string (write it as a string: "_id": "123")`},
	{"text not a string", `{"_id":"a","text":5}` + "\n", 1, `invalid JSON: "text" is a JSON number, want a string`},
	{"title an object", `{"_id":"a","title":{"x":1}}` + "\n", 1, `invalid JSON: "title" is a JSON object, want a string`},
	{"no id", `{"text":"x"}` + "\n", 1, `"_id": empty id`},
	{"null", "null\n", 1, `"_id": empty id`},
	{"space in id", `{"_id":"a b","text":"x"}` + "\n", 1, "white space"},
	{"duplicate id", `{"_id":"a"}` + "\n" + `{"_id":"b"}` + "\n" + `{"_id":"a"}` + "\n", 3, `duplicate`},
	{"id not UTF-8", `{"_id":"ok","text":"x"}` + "\n" + "{\"_id\":\"a\xff\",\"text\":\"x\"}\n", 2, "not valid UTF-8"},
	{"text under another key", `{"_id":"a","contents":"x"}` + "\n" + `{"_id":"b","contents":"y"}` + "\n", 0, `has any text: the first record's keys are "_id", "contents", without "title" or "text"`},
	{"no keys but ids", `{"_id":"a"}` + "\n", 0, `has any text: the first record's keys are "_id", without`},
	{"empty file", "", 0, "no records"},
	{"blank lines", "\n \n", 0, "no records"},
	{"BOM only", "\ufeff\r\n", 0, "no records"},
	{"BOM not at the start", `{"_id":"a"}` + "\n\ufeff" + `{"_id":"b"}` + "\n", 2, "not at the start of the file"},
}

func TestReadJSONLErrors(t *testing.T) {
	readers := map[string]func(io.Reader, string) (int, error){
		"corpus":  func(r io.Reader, name string) (int, error) { d, err := ReadCorpus(r, name); return len(d), err },
		"queries": func(r io.Reader, name string) (int, error) { q, err := ReadQueries(r, name); return len(q), err },
	}
	for reader, read := range readers {
		for _, tc := range jsonlErrors {
			t.Run(reader+"/"+tc.name, func(t *testing.T) {
				n, err := read(strings.NewReader(tc.in), "dir/x.jsonl")
				if n != 0 {
					t.Errorf("%d records returned with the error", n)
				}
				wantParseError(t, err, "dir/x.jsonl", tc.line, tc.msg)
			})
		}
	}
}

// TestReadJSONLEmptyTexts: records under BEIR's keys load with empty
// texts (a SemEval question may have neither subject nor body), as does a
// file where only some records lack the keys; only a file none of whose
// records has text, the first without the keys, is refused (jsonlErrors).
func TestReadJSONLEmptyTexts(t *testing.T) {
	for _, in := range []string{
		`{"_id":"a","text":""}`,
		`{"_id":"a","title":"","metadata":{"n":1}}`,
		`{"_id":"a","TEXT":""}`,
		`{"_id":"a"}` + "\n" + `{"_id":"b","text":"x"}`,
	} {
		if d, err := ReadCorpus(strings.NewReader(in), "c.jsonl"); err != nil || len(d) == 0 {
			t.Errorf("ReadCorpus(%q) = %v, %v", in, d, err)
		}
		if q, err := ReadQueries(strings.NewReader(in), "q.jsonl"); err != nil || len(q) == 0 {
			t.Errorf("ReadQueries(%q) = %v, %v", in, q, err)
		}
	}
}

func testDataset() *Dataset {
	cands := NewRun()
	for i, id := range []string{"d2", "d1", "d3"} {
		cands.Add("q1", Entry{DocID: id, Score: 1 / float64(i+1), Rank: i + 1})
	}
	cands.Add("q2", Entry{DocID: "d3", Score: 1, Rank: 1})
	return &Dataset{
		Corpus: []Doc{
			{ID: "d1", Title: "T1", Text: "text one", Metadata: map[string]any{"user_id": "U1", "position": 1.0, "by_author": true}},
			{ID: "d2", Text: "text two — ünïcode <&>"},
			{ID: "d3", Title: "T3", Text: "text three"},
		},
		Queries:    []Query{{ID: "q1", Title: "Q one", Text: "first"}, {ID: "q2", Text: "second", Metadata: map[string]any{"category": "Visas"}}},
		Qrels:      Qrels{"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}},
		Candidates: &cands,
	}
}

func TestDatasetRoundTrip(t *testing.T) {
	ds := testDataset()
	dir := filepath.Join(t.TempDir(), "new", "beir")
	if err := ds.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Dir != dir {
		t.Errorf("Dir = %q, want %q", got.Dir, dir)
	}
	if !reflect.DeepEqual(got.Corpus, ds.Corpus) {
		t.Errorf("Corpus = %#v\nwant %#v", got.Corpus, ds.Corpus)
	}
	if !reflect.DeepEqual(got.Queries, ds.Queries) {
		t.Errorf("Queries = %#v\nwant %#v", got.Queries, ds.Queries)
	}
	if !reflect.DeepEqual(got.Qrels, ds.Qrels) {
		t.Errorf("Qrels = %v, want %v", got.Qrels, ds.Qrels)
	}
	if got.Candidates == nil {
		t.Fatal("Candidates not loaded")
	}
	if !reflect.DeepEqual(got.Candidates.QueryIDs(), ds.Candidates.QueryIDs()) {
		t.Errorf("candidate queries = %v, want %v", got.Candidates.QueryIDs(), ds.Candidates.QueryIDs())
	}
	for _, qid := range ds.Candidates.QueryIDs() {
		w, g := ds.Candidates.Ranking(qid), got.Candidates.Ranking(qid)
		if len(w) != len(g) {
			t.Fatalf("%s: %d candidates, want %d", qid, len(g), len(w))
		}
		for i := range w {
			if g[i].DocID != w[i].DocID || g[i].Score != w[i].Score || g[i].Rank != w[i].Rank {
				t.Errorf("%s candidate %d = %+v, want %+v", qid, i, g[i], w[i])
			}
		}
	}
	if d, ok := got.Doc("d2"); !ok || d.Text != ds.Corpus[1].Text {
		t.Errorf("Doc(d2) = %+v, %v", d, ok)
	}
	if _, ok := got.Doc("nope"); ok {
		t.Error("Doc(nope) found")
	}
	if q, ok := got.Query("q2"); !ok || q.Text != "second" {
		t.Errorf("Query(q2) = %+v, %v", q, ok)
	}
	if _, ok := got.Query("nope"); ok {
		t.Error("Query(nope) found")
	}
}

func TestDatasetWithoutJudgmentsOrCandidates(t *testing.T) {
	for name, strip := range map[string]func(*Dataset){
		"nil":   func(ds *Dataset) { ds.Qrels, ds.Candidates = nil, nil },
		"empty": func(ds *Dataset) { r := NewRun(); ds.Qrels, ds.Candidates = Qrels{}, &r },
	} {
		t.Run(name, func(t *testing.T) {
			ds := testDataset()
			strip(ds)
			dir := t.TempDir()
			if err := ds.Save(dir); err != nil {
				t.Fatal(err)
			}
			got, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got.Qrels != nil || got.Candidates != nil {
				t.Errorf("Qrels = %v, Candidates = %v; want nil, nil", got.Qrels, got.Candidates)
			}
			if _, err := os.Stat(filepath.Join(dir, "qrels")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a dataset without judgments left a qrels folder (%v)", err)
			}
		})
	}
}

// TestDatasetSaveOverOldDataset saves a dataset without judgments or
// candidates where one with them was saved: the old files must not be read
// back as the new dataset's.
func TestDatasetSaveOverOldDataset(t *testing.T) {
	for name, strip := range map[string]func(*Dataset){
		"no judgments":  func(ds *Dataset) { ds.Qrels = nil },
		"no candidates": func(ds *Dataset) { ds.Candidates = nil },
		"neither":       func(ds *Dataset) { ds.Qrels, ds.Candidates = nil, nil },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := testDataset().Save(dir); err != nil {
				t.Fatal(err)
			}
			ds := testDataset()
			strip(ds)
			if err := ds.Save(dir); err != nil {
				t.Fatal(err)
			}
			got, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if (got.Qrels == nil) != (ds.Qrels == nil) || (got.Candidates == nil) != (ds.Candidates == nil) {
				t.Errorf("Qrels = %v, Candidates = %v; want %v, %v", got.Qrels, got.Candidates, ds.Qrels, ds.Candidates)
			}
		})
	}
}

func TestLoadRefusesUnknownIDs(t *testing.T) {
	tests := []struct {
		name, file, content, msg string
	}{
		{"qrels unknown query", QrelsFile, "query-id\tcorpus-id\tscore\nq1\td1\t1\nq9\td1\t1\n", `judgments for unknown query "q9"`},
		{"qrels unknown doc", QrelsFile, "q1 0 d1 1\nq1 0 d9 1\n", `unknown document "d9" (query "q1")`},
		{"qrels unknown docs, first by id", QrelsFile, "q1 0 dz 1\nq1 0 d1 1\nq1 0 dy 1\n", `unknown document "dy" (query "q1"); 2 judgments`},
		{"candidates unknown query", CandidatesFile, "q1 Q0 d1 1 1 given\nq7 Q0 d1 1 1 given\n", `candidates for unknown query "q7"`},
		{"candidates unknown doc", CandidatesFile, "q1 Q0 d1 1 1 given\nq1 Q0 dx 2 0.5 given\n", `unknown document "dx" (query "q1")`},
		{"broken corpus", CorpusFile, `{"_id":"d1"}` + "\n{", CorpusFile + ":2: invalid JSON"},
		{"empty queries", QueriesFile, "", QueriesFile + ": no records"},
		{"bad qrels label", QrelsFile, "q1 0 d1 yes\n", "test.tsv:1: relevance"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := testDataset().Save(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			ds, err := Load(dir)
			if err == nil {
				t.Fatalf("Load accepted %s", tc.file)
			}
			if ds != nil {
				t.Error("dataset returned with the error")
			}
			if !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q: want it to name %s and say %q", err, dir, tc.msg)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Load accepted a missing directory")
	}
}

// TestLoadUnreadableOptionalFile checks that a judgments or
// candidates file that exists but cannot be read is an error, not a
// dataset loaded as if it had none.
func TestLoadUnreadableOptionalFile(t *testing.T) {
	for _, file := range []string{QrelsFile, CandidatesFile} {
		t.Run(file, func(t *testing.T) {
			dir := t.TempDir()
			if err := testDataset().Save(dir); err != nil {
				t.Fatal(err)
			}
			// A link to itself: stat fails with ELOOP, even for root.
			p := filepath.Join(dir, file)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Base(p), p); err != nil {
				t.Skip(err)
			}
			ds, err := Load(dir)
			if err == nil {
				t.Fatalf("Load read %s as absent: Qrels = %v, Candidates = %v", file, ds.Qrels, ds.Candidates)
			}
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not name %s", err, p)
			}
		})
	}
}

// TestDocAfterCorpusChanges checks that Doc follows a corpus replaced or
// grown after an earlier lookup built its index, instead of answering from
// the old index (a wrong document, a missing one, or an index out of range).
func TestDocAfterCorpusChanges(t *testing.T) {
	tests := []struct {
		name   string
		change func(ds *Dataset)
		id     string
		want   string // text; "" for not found
	}{
		{"appended", func(ds *Dataset) { ds.Corpus = append(ds.Corpus, Doc{ID: "d9", Text: "new"}) }, "d9", "new"},
		{"shrunk", func(ds *Dataset) { ds.Corpus = ds.Corpus[:1] }, "d3", ""},
		{"reordered", func(ds *Dataset) { ds.Corpus = []Doc{ds.Corpus[2], ds.Corpus[0], ds.Corpus[1]} }, "d1", "text one"},
		{"replaced", func(ds *Dataset) { ds.Corpus = []Doc{{ID: "x", Text: "x"}, {ID: "d1", Text: "other"}, {ID: "y"}} }, "d1", "other"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := testDataset()
			if _, ok := ds.Doc("d1"); !ok {
				t.Fatal("d1 not found")
			}
			tc.change(ds)
			d, ok := ds.Doc(tc.id)
			if got := map[bool]string{true: d.Text}[ok]; got != tc.want || ok != (tc.want != "") {
				t.Errorf("Doc(%s) = %+v, %v; want text %q", tc.id, d, ok, tc.want)
			}
		})
	}
}

// TestLoadText: the text of a directory is its documents and, where it
// has them, its queries; judgments and candidate lists are not read.
func TestLoadText(t *testing.T) {
	const (
		corpus  = `{"_id":"d1","text":"bank fees"}` + "\n"
		queries = `{"_id":"q1","text":"fees"}` + "\n"
	)
	tests := []struct {
		name          string
		files         map[string]string
		docs, queries int
		wantErr       string
	}{
		{"corpus and queries", map[string]string{CorpusFile: corpus, QueriesFile: queries}, 1, 1, ""},
		{"corpus alone", map[string]string{CorpusFile: corpus}, 1, 0, ""},
		{"judgments and candidates not read", map[string]string{CorpusFile: corpus, QrelsFile: "broken", CandidatesFile: "q9 Q0 d9 1 1 x\n"}, 1, 0, ""},
		{"no corpus", map[string]string{QueriesFile: queries}, 0, 0, CorpusFile},
		{"broken queries", map[string]string{CorpusFile: corpus, QueriesFile: "{\n"}, 0, 0, QueriesFile + ":1: invalid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, c := range tc.files {
				path := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			docs, qs, err := LoadText(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != tc.docs || len(qs) != tc.queries {
				t.Errorf("%d documents, %d queries; want %d, %d", len(docs), len(qs), tc.docs, tc.queries)
			}
		})
	}
}

// TestLoadFS reads a BEIR directory inside an fs.FS (as the demo
// reads its data built into the binary) into what Load reads from
// disk, and names the files by their path in the FS in errors.
func TestLoadFS(t *testing.T) {
	dir := t.TempDir()
	if err := testDataset().Save(dir); err != nil {
		t.Fatal(err)
	}
	want, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for _, name := range []string{CorpusFile, QueriesFile, QrelsFile, CandidatesFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		fsys["data/beir/"+name] = &fstest.MapFile{Data: b}
	}
	got, err := LoadFS(fsys, "data/beir")
	if err != nil {
		t.Fatal(err)
	}
	if got.Dir != "data/beir" || !reflect.DeepEqual(got.Corpus, want.Corpus) || !reflect.DeepEqual(got.Queries, want.Queries) ||
		!reflect.DeepEqual(got.Qrels, want.Qrels) || !reflect.DeepEqual(got.Candidates.Sorted("q1"), want.Candidates.Sorted("q1")) {
		t.Errorf("from the FS: %+v\nfrom disk: %+v", got, want)
	}

	// Judgments and candidates are optional there too; a broken file is
	// named by its path in the FS.
	delete(fsys, "data/beir/"+QrelsFile)
	delete(fsys, "data/beir/"+CandidatesFile)
	if got, err := LoadFS(fsys, "data/beir"); err != nil || got.Qrels != nil || got.Candidates != nil {
		t.Errorf("without judgments and candidates: %v, %v", got, err)
	}
	fsys["data/beir/"+QueriesFile] = &fstest.MapFile{Data: []byte("{")}
	if _, err := LoadFS(fsys, "data/beir"); err == nil || !strings.Contains(err.Error(), "data/beir/"+QueriesFile+":1") {
		t.Errorf("broken queries: %v", err)
	}
	if _, err := LoadFS(fsys, "nowhere"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}
