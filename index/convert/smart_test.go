package convert

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
)

const (
	cacmDocs    = "../../testdata/cacm/cacm.all"
	cacmQueries = "../../testdata/cacm/query.text"
	cacmQrels   = "../../testdata/cacm/qrels.text"
)

func TestSMARTCACM(t *testing.T) {
	ds, err := SMART(cacmDocs, cacmQueries, cacmQrels)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := docIDs(ds), "1 2 3 1410 1572 1605 2020 2358 2434 2651 2863 3078"; got != want {
		t.Errorf("documents = %s, want %s", got, want)
	}
	d := ds.Corpus[0]
	wantMeta := map[string]any{"date": "CACM December, 1958", "authors": []string{"Perlis, A. J.", "Samelson,K."}}
	if d.Title != "Preliminary Report-International Algebraic Language" || d.Text != "" || !reflect.DeepEqual(d.Metadata, wantMeta) {
		t.Errorf("document 1 = %#v", d)
	}
	d, _ = ds.Doc("1410")
	if d.Title != "Interarrival Statistics for Time Sharing Systems" ||
		!strings.HasPrefix(d.Text, "The optimization of time-shared system performance requires the description of the stochastic processes governing") {
		t.Errorf("document 1410 = %q / %q", d.Title, d.Text)
	}
	if _, ok := d.Metadata["X"]; ok || strings.Contains(d.Text, "\n") {
		t.Errorf("document 1410 keeps citations or line breaks: %#v", d)
	}
	// Keywords follow the abstract as text; the CR categories (.C) and
	// entry notes (.N) are dropped.
	d, _ = ds.Doc("2434")
	if !strings.HasSuffix(d.Text, "for selecting the working set parameter. working set model, paging, program behavior,program modeling") ||
		strings.Contains(d.Text, "4.3") || strings.Contains(d.Text, "CA") {
		t.Errorf("document 2434 text = %q", d.Text)
	}

	// The trailing empty ".I 0" record is dropped; only .W is query text.
	if got := queryIDs(ds); got != "1 2 34 64" {
		t.Errorf("queries = %s, want 1 2 34 64", got)
	}
	q, _ := ds.Query("2")
	if q.Text != "I am interested in articles written either by Prieve or Udo Pooch" || q.Title != "" {
		t.Errorf("query 2 = %+v", q)
	}
	q, _ = ds.Query("1")
	if q.Text != "What articles exist which deal with TSS (Time Sharing System), an operating system for IBM computers?" {
		t.Errorf("query 1 = %q", q.Text)
	}

	// Zero-padded query ids in qrels.text name the same queries; every
	// listed pair is relevant; query 34 has no judgments.
	want := dataset.Qrels{
		"1":  {"1410": 1, "1572": 1, "1605": 1, "2020": 1, "2358": 1},
		"2":  {"2434": 1, "2863": 1, "3078": 1},
		"64": {"2651": 1},
	}
	if !reflect.DeepEqual(ds.Qrels, want) {
		t.Errorf("qrels = %v, want %v", ds.Qrels, want)
	}
	if ds.Candidates != nil {
		t.Error("a SMART collection has no given candidates")
	}

	if back := saveAndLoad(t, ds); docIDs(back) != docIDs(ds) || queryIDs(back) != queryIDs(ds) || !reflect.DeepEqual(back.Qrels, ds.Qrels) {
		t.Error("CACM slice changed through Save and dataset.Load")
	}
}

func TestReadSMART(t *testing.T) {
	tests := []struct {
		name, in string
		want     []smartRecord
	}{
		{
			"fields and trailing empty record",
			"\n.I 1\n.T\nA title\n.W\n two\nlines \n.X\n1\t5\t1\n.I 0\n",
			[]smartRecord{{id: "1", line: 2, fields: map[string]string{"T": "A title", "W": "two\nlines", "X": "1\t5\t1"}}},
		},
		{
			"CRLF, zero-padded ids, empty record in the middle",
			".I 007\r\n.W\r\nq\r\n.I 8\r\n.W\r\n\r\n.I 9\r\n.T\r\nt",
			[]smartRecord{
				{id: "7", line: 1, fields: map[string]string{"W": "q"}},
				{id: "9", line: 7, fields: map[string]string{"T": "t"}},
			},
		},
		{
			"tab after .I, blank line outside a field",
			".I\t12\n\n.T\nx\n",
			[]smartRecord{{id: "12", line: 1, fields: map[string]string{"T": "x"}}},
		},
		{
			"a line like .Ix is text",
			".I 1\n.W\n.Ix and .w\n",
			[]smartRecord{{id: "1", line: 1, fields: map[string]string{"W": ".Ix and .w"}}},
		},
		{
			"white space after a tag",
			".I 1 \n.T \nA title\n.W\t\nabstract\n.A \r\nKnuth, D.\n",
			[]smartRecord{{id: "1", line: 1, fields: map[string]string{"T": "A title", "W": "abstract", "A": "Knuth, D."}}},
		},
		{
			"byte order mark",
			"\ufeff.I 1\r\n.W\r\nq\r\n",
			[]smartRecord{{id: "1", line: 1, fields: map[string]string{"W": "q"}}},
		},
		{
			"a repeated field keeps every part",
			".I 1\n.A\nSmith, J.\n.W\nabstract\n.A\nJones, K.\n.A\n\n",
			[]smartRecord{{id: "1", line: 1, fields: map[string]string{"A": "Smith, J.\nJones, K.", "W": "abstract"}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readSMART(strings.NewReader(tc.in), "f")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("readSMART = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestReadSMARTErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		msg      string
	}{
		{"no id", ".I 1\n.W\nx\n.I\n", 4, "without an id"},
		{"id not a number", ".I 1\n.W\nx\n.I one\n", 4, `"one" is not a number`},
		{"id with two words", ".I 1 2\n", 1, "not a number"},
		{"text before the first record", "hello\n.I 1\n", 1, "text before the first .I"},
		{"field before the first record", "\n.W\n.I 1\n", 2, "field .W before the first .I"},
		{"text outside a field", ".I 1\nstray\n.W\nx\n", 2, "text outside any field in record 1"},
		{"empty file", "", 0, "no records"},
		{"only the empty record", ".I 0", 0, "no records"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := readSMART(strings.NewReader(tc.in), "dir/x.all")
			var pe *dataset.ParseError
			if recs != nil || !errors.As(err, &pe) {
				t.Fatalf("readSMART = %v, %v; want a *dataset.ParseError", recs, err)
			}
			if pe.File != "dir/x.all" || pe.Line != tc.line || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q: want dir/x.all:%d and %q", err, tc.line, tc.msg)
			}
		})
	}
}

func TestReadSMARTQrels(t *testing.T) {
	queries := map[string]bool{"1": true, "2": true}
	docs := map[string]bool{"10": true, "20": true}
	long := strings.Repeat("x", 100<<10)
	tests := []struct {
		name, in string
		want     dataset.Qrels
	}{
		{"CACM form", "01 10 0 0\n01 20\t0\t0\n\n02 010 0 0\n", dataset.Qrels{"1": {"10": 1, "20": 1}, "2": {"10": 1}}},
		{"byte order mark, CRLF", "\ufeff01 10 0 0\r\n02 20 0 0\r\n", dataset.Qrels{"1": {"10": 1}, "2": {"20": 1}}},
		{"a line longer than 64 KiB", "1 10 " + long + "\n2 20 y\n", dataset.Qrels{"1": {"10": 1}, "2": {"20": 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readSMARTQrels(strings.NewReader(tc.in), "qrels", queries, docs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("readSMARTQrels = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSMARTDocumentText(t *testing.T) {
	tests := []struct {
		name, record, want string
	}{
		{"abstract only", ".W\nAn abstract\non two lines.\n", "An abstract on two lines."},
		{"keywords only", ".K\nsorting, merging,\ntape files\n.C\n3.73\n", "sorting, merging, tape files"},
		{"abstract, then keywords", ".K\nsorting\n.W\nAn abstract.\n", "An abstract. sorting"},
		{"neither", ".B\nCACM June, 1960\n.N\nCA600603 JB\n", ""},
	}
	dir := t.TempDir()
	queries := filepath.Join(dir, "queries")
	qrels := filepath.Join(dir, "qrels")
	if err := os.WriteFile(queries, []byte(".I 1\n.W\nsorting\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(qrels, []byte("1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			docs := filepath.Join(t.TempDir(), "docs")
			if err := os.WriteFile(docs, []byte(".I 1\n.T\nA title\n"+tc.record), 0o644); err != nil {
				t.Fatal(err)
			}
			ds, err := SMART(docs, queries, qrels)
			if err != nil {
				t.Fatal(err)
			}
			if d := ds.Corpus[0]; d.Text != tc.want || d.Title != "A title" {
				t.Errorf("document = %q / %q, want text %q", d.Title, d.Text, tc.want)
			}
		})
	}
}

func TestSMARTErrors(t *testing.T) {
	write := func(t *testing.T, name, content string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const docs = ".I 1\n.T\nOne\n.I 2\n.T\nTwo\n"
	const queries = ".I 1\n.W\nfirst\n.I 2\n.W\nsecond\n"
	tests := []struct {
		name                string
		docs, queries, qrel string
		file                string // which file the error names
		msg                 string
	}{
		{"unknown query", docs, queries, "01 1 0 0\n03 2 0 0\n", "qrels", "qrels:2: unknown query 03"},
		{"unknown document", docs, queries, "1 1 0 0\n\n2 9 0 0\n", "qrels", "qrels:3: unknown document 9"},
		{"short qrels line", docs, queries, "1\n", "qrels", "qrels:1:"},
		{"qrels lines run together", docs, queries, "1 1 0 0\n2 2 0 01 2 0 0\n", "qrels", "qrels:2: 7 fields, but line 1 has 4"},
		{"qrels line without its last fields", docs, queries, "1 1 0 0\n\n2 2\n", "qrels", "qrels:3: 2 fields, but line 1 has 4"},
		{"empty qrels", docs, queries, "\n", "qrels", "qrels: no records"},
		{"duplicate document", docs + ".I 01\n.T\nagain\n", queries, "1 1\n", "docs", "docs:7: duplicate document id 1"},
		{"duplicate query", docs, queries + ".I 2\n.W\nagain\n", "1 1\n", "queries", "queries:7: duplicate query id 2"},
		{"query without text", docs, queries + ".I 3\n.N\nnobody\n", "1 1\n", "queries", "queries:7: query 3 has no .W text"},
		{"broken documents", "x\n", queries, "1 1\n", "docs", "docs:1: text before"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			paths := map[string]string{
				"docs":    write(t, "docs", tc.docs),
				"queries": write(t, "queries", tc.queries),
				"qrels":   write(t, "qrels", tc.qrel),
			}
			ds, err := SMART(paths["docs"], paths["queries"], paths["qrels"])
			if err == nil || ds != nil {
				t.Fatalf("SMART = %v, %v; want an error", ds, err)
			}
			dir := filepath.Dir(paths[tc.file])
			if !strings.Contains(err.Error(), filepath.Join(dir, tc.msg)) {
				t.Errorf("error %q: want it to contain %q", err, filepath.Join(dir, tc.msg))
			}
		})
	}
	if _, err := SMART(cacmDocs, cacmQueries, filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("SMART accepted a missing qrels file")
	}
}
