package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
)

// TestConvertThenRerankHeldOut runs the held-out path as the test set
// will be scored: an unlabelled SemEval file (every label "?") is
// converted, then reranked with a pipeline; every query of the split gets
// its whole given list back, and nothing is judged. The labelled file
// converts to the same queries and candidates, with judgments.
func TestConvertThenRerankHeldOut(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile("../../testdata/semeval/dev-slice.xml")
	if err != nil {
		t.Fatal(err)
	}
	labels := regexp.MustCompile(`(RELQ_RELEVANCE2ORGQ|RELC_RELEVANCE2RELQ|RELC_RELEVANCE2ORGQ)="[^"]*"`)
	unlabelled := filepath.Join(dir, "test.xml")
	if err := os.WriteFile(unlabelled, []byte(labels.ReplaceAllString(string(raw), `$1="?"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	pipeline := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(pipeline, []byte("stages:\n  - type: tfidf\n  - type: overlap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"A", "B"} {
		t.Run("subtask "+st, func(t *testing.T) {
			split, gold := filepath.Join(dir, "T"+st), filepath.Join(dir, "G"+st)
			out, err := execute("convert", "semeval2016", "--xml", unlabelled, "--subtask", st, "--out", split)
			if err != nil || !strings.Contains(out, "0 judged") {
				t.Fatalf("convert: %v\n%s", err, out)
			}
			if out, err := execute("convert", "semeval2016", "--xml", "../../testdata/semeval/dev-slice.xml", "--subtask", st, "--out", gold); err != nil || strings.Contains(out, " 0 judged") {
				t.Fatalf("convert labelled: %v\n%s", err, out)
			}
			test, err := dataset.Load(split)
			if err != nil {
				t.Fatal(err)
			}
			labelled, err := dataset.Load(gold)
			if err != nil {
				t.Fatal(err)
			}
			if test.Qrels != nil || labelled.Qrels == nil {
				t.Fatalf("judgments: unlabelled %v, labelled %d queries", test.Qrels, len(labelled.Qrels))
			}
			if len(test.Queries) != len(labelled.Queries) || test.Candidates.Len() != labelled.Candidates.Len() {
				t.Errorf("unlabelled split: %d queries, %d lists; labelled %d, %d", len(test.Queries), test.Candidates.Len(), len(labelled.Queries), labelled.Candidates.Len())
			}
			run := filepath.Join(dir, "run"+st+".trec")
			if out, err := execute("rerank", "--data", split, "--pipeline", pipeline, "--out", run); err != nil {
				t.Fatalf("rerank: %v\n%s", err, out)
			}
			// The directory holding pipeline.yaml stands for it, as a
			// recipe's output directory does.
			byDir := filepath.Join(dir, "run"+st+"-dir.trec")
			if out, err := execute("rerank", "--data", split, "--pipeline", dir, "--out", byDir); err != nil {
				t.Fatalf("rerank --pipeline DIR: %v\n%s", err, out)
			}
			if a, b := readFile(t, run), readFile(t, byDir); a != b {
				t.Errorf("--pipeline %s and --pipeline %s wrote different runs", pipeline, dir)
			}
			got, err := dataset.ReadRunFile(run)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range test.Queries {
				given := test.Candidates.Ranking(q.ID)
				if len(given) == 0 {
					continue
				}
				if n := len(got.Ranking(q.ID)); n != len(given) {
					t.Errorf("query %s: %d reranked candidates, %d given", q.ID, n, len(given))
				}
			}
		})
	}
}

// TestConvertNotesClashes: an id read twice with different texts (two
// files holding one question, edited in one) is noted, not dropped
// silently; the same file twice is not.
func TestConvertNotesClashes(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile("../../testdata/semeval/dev-slice.xml")
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "edited.xml")
	subject := regexp.MustCompile(`<RelQSubject>[^<]*</RelQSubject>`)
	if err := os.WriteFile(edited, []byte(subject.ReplaceAllString(string(raw), "<RelQSubject>another subject</RelQSubject>")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		second string
		noted  bool
	}{
		{"same file twice", "../../testdata/semeval/dev-slice.xml", false},
		{"an edited copy", edited, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := execute("convert", "semeval2016", "--xml", "../../testdata/semeval/dev-slice.xml", "--xml", tc.second, "--subtask", "B", "--out", filepath.Join(t.TempDir(), "out"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(out, "note:"); got != tc.noted {
				t.Errorf("noted %v, want %v:\n%s", got, tc.noted, out)
			}
		})
	}
}

// TestConvertNotesUnlabelled: a query whose candidates are labelled but
// for some "?" is noted (eval would count those as not relevant); a file
// labelled throughout, or not at all, is not.
func TestConvertNotesUnlabelled(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/semeval/dev-slice.xml")
	if err != nil {
		t.Fatal(err)
	}
	one := regexp.MustCompile(`(RELC_ID="Q268_R16_C3"[^>]*RELC_RELEVANCE2RELQ=)"[^"]*"`)
	all := regexp.MustCompile(`(RELC_RELEVANCE2RELQ=)"[^"]*"`)
	for _, tc := range []struct {
		name string
		xml  string
		want string // a note's text, or "" for no note
	}{
		{"labelled", string(raw), ""},
		{"one comment unlabelled", one.ReplaceAllString(string(raw), `$1"?"`), "query Q268_R16: 1 of its 10 candidates are unlabelled"},
		{"unlabelled", all.ReplaceAllString(string(raw), `$1"?"`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "in.xml")
			if err := os.WriteFile(in, []byte(tc.xml), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := execute("convert", "semeval2016", "--xml", in, "--subtask", "A", "--out", filepath.Join(t.TempDir(), "out"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" && strings.Contains(out, "note:") || tc.want != "" && !strings.Contains(out, "note: "+tc.want) {
				t.Errorf("output %q, want note %q", out, tc.want)
			}
		})
	}
}

// TestConvertSMART: the CACM slice converts through the command, judged
// queries counted, and a missing file is named.
func TestConvertSMART(t *testing.T) {
	out, err := execute("convert", "smart", "--docs", "../../testdata/cacm/cacm.all", "--queries", "../../testdata/cacm/query.text",
		"--qrels", "../../testdata/cacm/qrels.text", "--out", filepath.Join(t.TempDir(), "cacm"))
	if err != nil || !strings.Contains(out, "12 documents, 4 queries, 3 judged") {
		t.Errorf("convert smart: %v\n%s", err, out)
	}
	missing := filepath.Join(t.TempDir(), "none.all")
	if _, err := execute("convert", "smart", "--docs", missing, "--queries", "../../testdata/cacm/query.text",
		"--qrels", "../../testdata/cacm/qrels.text", "--out", filepath.Join(t.TempDir(), "x")); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing docs: err %v, want one naming %s", err, missing)
	}
}

// readFile returns a file's contents, failing the test when it cannot.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConvertBleve writes the documents of a plain Bleve index (the
// demo's, under fields subject and body) back as a corpus whose titles and
// texts are the documents', the pipeline's fields read.
func TestConvertBleve(t *testing.T) {
	ds, err := dataset.Load("../../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plain, err := bleve.New(filepath.Join(dir, "plain"), bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	b := plain.NewBatch()
	for _, d := range ds.Corpus {
		if err := b.Index(d.ID, map[string]any{"subject": d.Title, "body": d.Text, "user": "u-" + d.ID}); err != nil {
			t.Fatal(err)
		}
	}
	if err := plain.Batch(b); err != nil {
		t.Fatal(err)
	}
	plain.Close()
	pipeline := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(pipeline, []byte("fields: {title: subject, text: body}\nstages: [{type: tfidf}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := execute("convert", "bleve", "--index", filepath.Join(dir, "plain"), "--pipeline", pipeline, "--out", filepath.Join(dir, "out")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	docs, err := dataset.LoadCorpus(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != len(ds.Corpus) {
		t.Fatalf("%d documents, want %d", len(docs), len(ds.Corpus))
	}
	for _, d := range docs {
		want, _ := ds.Doc(d.ID)
		if d.Title != want.Title || d.Text != want.Text || d.Metadata["user"] != "u-"+d.ID || len(d.Metadata) != 1 {
			t.Fatalf("document %s: %q %q %v, want %q %q and its user only", d.ID, d.Title, d.Text, d.Metadata, want.Title, want.Text)
		}
	}
	if out, err := execute("convert", "bleve", "--index", filepath.Join(dir, "plain"), "--out", filepath.Join(dir, "out2")); err == nil || !strings.Contains(err.Error(), "body, subject") {
		t.Errorf("without the pipeline's fields: err %v, want one naming the fields there are\n%s", err, out)
	}
}
