package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// TestTrainFromPlainIndex trains each trainer reading candidate lists
// (tweak, lsa, s2net) and the fusion from a Bleve index semrank did not
// build, given only queries and judgments: the documents are the index's,
// read through the pipeline's fields, and the candidates its first stage's;
// and the word vectors and topics from the same documents.
// The stages so trained then attach their payloads to that index, and a
// run over it reads the queries alone.
func TestTrainFromPlainIndex(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plain")
	_, plain := demoPlainIndex(t, path)
	plain.Close()
	data := writeDataDir(t, filepath.Join(dir, "data"), map[string]string{
		"queries.jsonl":   readFile(t, "../../testdata/demo/queries.jsonl"),
		dataset.QrelsFile: readFile(t, "../../testdata/demo/"+dataset.QrelsFile),
	})
	fields := "window: 30\nfields: {title: subject, text: [body]}\n"
	pipeline := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(pipeline, []byte(fields+"stages:\n  - type: tfidf\n  - type: tweak\n    model: t.tweak\n  - type: lsa\n    model: l.lsa\n  - type: s2net\n    model: s.s2net\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	over := []string{"--data", data, "--index", path, "--pipeline", pipeline}
	for _, args := range [][]string{
		append([]string{"train", "tweak", "--alpha", "0.1", "--max-iter", "5", "--out", filepath.Join(dir, "t.tweak")}, over...),
		append([]string{"train", "lsa", "--dim", "4", "--out", filepath.Join(dir, "l.lsa")}, over...),
		append([]string{"train", "s2net", "--dim", "4", "--iter", "3", "--out", filepath.Join(dir, "s.s2net")}, over...),
		append([]string{"train", "fusion", "--out", filepath.Join(dir, "p.fusion")}, over...),
		{"train", "embed", "--index", path, "--pipeline", pipeline, "--dim", "8", "--epochs", "1", "--out", filepath.Join(dir, "e.vec")},
		{"train", "topics", "--index", path, "--pipeline", pipeline, "--topics", "3", "--out", filepath.Join(dir, "e.topics")},
		{"attach", "--index", path, "--pipeline", pipeline},
		{"run", "--data", data, "--index", path, "--pipeline", pipeline, "--out", filepath.Join(dir, "run.trec")},
		{"inspect", path},
	} {
		out, err := execute(args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if args[0] == "inspect" && !strings.Contains(out, "attached   from fields title: [subject], text: [body], analyzer standard") {
			t.Errorf("inspect does not describe the attached payloads:\n%s", out)
		}
		if args[0] == "attach" {
			for _, want := range []string{"payload tweak from model tweak-", "payload lsa from model", "payload s2net from model", "payload terms from model bleve-standard", "text: [body]"} {
				if !strings.Contains(out, want) {
					t.Errorf("attach output lacks %q:\n%s", want, out)
				}
			}
		}
	}
	// Fields name the index's documents: without an index, a mistake.
	if out, err := execute("train", "lsa", "--data", data, "--pipeline", pipeline, "--out", filepath.Join(dir, "x.lsa")); err == nil || !strings.Contains(err.Error(), "give --index too") {
		t.Fatalf("--pipeline without --index: %v\n%s", err, out)
	}
}
