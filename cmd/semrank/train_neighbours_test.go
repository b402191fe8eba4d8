package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainNeighbours: lists computed from a BEIR directory or from the
// index of its documents, and lists brought up to date after the
// collection changed, leave an ssg pipeline's run unchanged, short or
// long; the command refuses what it cannot use, and a pipeline refuses
// lists computed in other word vectors.
func TestTrainNeighbours(t *testing.T) {
	const data = "../../testdata/concepts/semeval-b"
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	for _, args := range [][]string{
		{"train", "embed", "--method", "ppmi", "--data", data, "--dim", "8", "--out", at("vec")},
		{"train", "embed", "--method", "ppmi", "--data", data, "--dim", "7", "--out", at("other")},
		{"train", "topics", "--data", data, "--topics", "3", "--out", at("topics")},
		{"index", "--data", data, "--index", at("idx")},
	} {
		if msg, err := execute(args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, msg)
		}
	}
	pipeline := func(name, vectors, lists string) string {
		opts := "topics: topics"
		if lists != "" {
			opts += ", neighbours: " + lists
		}
		y := fmt.Sprintf("stages:\n  - type: ssg\n    model: %s\n    options: {%s}\nfusion: {weights: {ssg: 1}}\n", vectors, opts)
		if err := os.WriteFile(at(name), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		return at(name)
	}
	// runOn returns the run of pipeline p over the queries of dir and
	// the index idx.
	runOn := func(dir, idx, p string) []byte {
		out := at("run.trec")
		if msg, err := execute("run", "--data", dir, "--index", idx, "--pipeline", p, "--out", out); err != nil {
			t.Fatalf("run %s: %v\n%s", p, err, msg)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	run := func(p string) []byte { return runOn(data, at("idx"), p) }
	base := pipeline("base.yaml", "vec", "")
	want := run(base)
	for _, tc := range []struct {
		name string
		from []string
		size string
	}{
		{"data-short", []string{"--data", data}, "4"},
		{"index-long", []string{"--index", at("idx")}, "200"},
	} {
		msg, err := execute("train", "neighbours", "--pipeline", base, "--size", tc.size, "--out", at(tc.name), tc.from[0], tc.from[1])
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, msg)
		}
		if !strings.Contains(msg, "of each of 80 documents") {
			t.Errorf("%s: printed %q", tc.name, msg)
		}
		if got := run(pipeline(tc.name+".yaml", "vec", tc.name)); !bytes.Equal(got, want) {
			t.Errorf("%s: the run with lists differs from the run without", tc.name)
		}
	}
	// The collection changes: its first document edited, one added. The
	// lists brought up to date search those two and leave the run as it
	// is without lists.
	// Without candidates.trec: run retrieves from the changed index.
	changed := at("changed")
	if err := os.CopyFS(changed, os.DirFS(data)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(changed, "candidates.trec")); err != nil {
		t.Fatal(err)
	}
	corpus, err := os.ReadFile(filepath.Join(data, "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(corpus), "\n")
	lines[0] = strings.Replace(lines[0], `"text": "`, `"text": "salary visa sponsor `, 1)
	lines = append(lines, `{"_id": "added", "title": "bank loan", "text": "which bank gives a loan on a low salary"}`+"\n")
	if err := os.WriteFile(filepath.Join(changed, "corpus.jsonl"), []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	msg, err := execute("train", "neighbours", "--pipeline", base, "--data", changed, "--update", at("data-short"), "--out", at("data-short"))
	if err != nil || !strings.Contains(msg, "of each of 81 documents, 2 searched") {
		t.Fatalf("update: %v\n%s", err, msg)
	}
	if msg, err := execute("index", "--data", changed, "--index", at("idx2")); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	if !bytes.Equal(runOn(changed, at("idx2"), pipeline("updated.yaml", "vec", "data-short")), runOn(changed, at("idx2"), base)) {
		t.Error("the run with updated lists differs from the run without")
	}
	if msg, err := execute("run", "--data", data, "--index", at("idx"), "--pipeline", pipeline("other.yaml", "other", "data-short"), "--out", at("x")); err == nil || !strings.Contains(err.Error(), "other word vectors") {
		t.Errorf("lists over other vectors: err = %v\n%s", err, msg)
	}
	noSSG := at("tfidf.yaml")
	if err := os.WriteFile(noSSG, []byte("stages: [{type: tfidf}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--pipeline", base, "--out", at("l")}, "one of --data DIR or --index PATH"},
		{[]string{"--pipeline", base, "--data", data, "--index", at("idx"), "--out", at("l")}, "one of --data DIR or --index PATH"},
		{[]string{"--pipeline", base, "--data", data, "--size", "0", "--out", at("l")}, "--size 0"},
		{[]string{"--pipeline", noSSG, "--data", data, "--out", at("l")}, "has no ssg stage"},
		{[]string{"--pipeline", base, "--stage", "nope", "--data", data, "--out", at("l")}, `no ssg stage named "nope"`},
		{[]string{"--pipeline", base, "--data", data, "--out", base}, "would overwrite"},
		{[]string{"--pipeline", base, "--data", data, "--update", at("data-short"), "--size", "9", "--out", at("l")}, "--update keeps the earlier lists' size"},
		{[]string{"--pipeline", base, "--data", data, "--update", at("nope"), "--out", at("l")}, "nope"},
	} {
		if _, err := execute(append([]string{"train", "neighbours"}, tc.args...)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}
