package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/rerank"
)

// TestInspect describes a trained TWEAK model, a pipeline reading it, an
// index holding its payloads and a fusion model, and fails, naming the
// problem, on a damaged model, a pipeline whose model is missing, and a
// pipeline whose model did not write the index's payloads.
func TestInspect(t *testing.T) {
	dir := t.TempDir()
	data := "../../testdata/tweak"
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	model := filepath.Join(dir, "tweak.model")
	other := filepath.Join(dir, "other.model")
	idx := filepath.Join(dir, "idx")
	pipeline := write("pipeline.yaml", "stages:\n  - type: tfidf\n  - type: tweak\n    model: tweak.model\n")
	otherPipeline := write("other.yaml", "stages:\n  - type: tfidf\n  - type: tweak\n    model: other.model\n")
	jsonPipeline := write("pipeline.json", `{"stages": [{"type": "tfidf"}, {"type": "tweak", "model": "tweak.model"}]}`)
	brokenModel := write("broken.yaml", "stages:\n  - type: tfidf\n    model: does-not-exist.model\n")
	bare := filepath.Join(dir, "bare")
	missing := write("missing.yaml", "stages:\n  - type: tweak\n    model: absent.model\n")
	write("vectors.txt", "3 2\nbank 0.1 0.2\naccount 0.3 -0.1\nvisa -0.2 0.4\n")
	wordVectors := write("wmd.yaml", "stages:\n  - type: wmd\n    model: vectors.txt\n")
	for _, args := range [][]string{
		{"train", "tweak", "--data", data, "--alpha", "0.1", "--out", model},
		{"train", "tweak", "--data", data, "--alpha", "0.3", "--out", other},
		{"index", "--data", data, "--index", idx, "--pipeline", pipeline},
		{"index", "--data", data, "--index", bare},
	} {
		if out, err := execute(args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	raw, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	damaged := write("damaged.model", string(raw[:len(raw)/2]))
	sum, err := rerank.FileSHA256(model)
	if err != nil {
		t.Fatal(err)
	}
	summed := write("summed.yaml", "stages:\n  - type: tweak\n    model: tweak.model\nsha256:\n  tweak.model: "+sum+"\n")
	missummed := write("missummed.yaml", "stages:\n  - type: tweak\n    model: other.model\nsha256:\n  other.model: "+sum+"\n")
	fusion := filepath.Join(dir, "fusion.model")
	lin := &rerank.Linear{Weights: map[string]float64{"tfidf": 0.5, "first_rank": -1, "tweak": 0.25}}
	if err := lin.Bundle().Save(fusion); err != nil {
		t.Fatal(err)
	}

	if err := (&rerank.Linear{Weights: map[string]float64{"tfidf": 1, rerank.FeatureGivenRank: 0.75}}).Bundle().Save(filepath.Join(dir, "given.model")); err != nil {
		t.Fatal(err)
	}
	givenPipeline := write("given.yaml", "stages:\n  - type: tfidf\nfusion:\n  model: given.model\n")
	smoothPipeline := write("smooth.yaml", "stages:\n  - type: tfidf\nfusion:\n  regularize: {alpha: 0.7}\n")
	tests := []struct {
		name    string
		args    []string
		wantErr bool
		want    []string
	}{
		{"model", []string{model}, false, []string{"method     tweak (model version 1", "analyzer   semrank_en/1", "id         tweak-"}},
		{"pipeline whose fusion weighs the given rank", []string{givenPipeline}, false, []string{"note       the fusion weighs given_rank (0.75)"}},
		{"pipeline regularizing its fused scores", []string{smoothPipeline}, false, []string{"fusion     linear\n  then       fusion.regularize: the fused scores regularized over the window (alpha=0.7)", "builds     ok"}},
		{"fusion weights, largest first", []string{fusion}, false, []string{"weight     -1.0000  first_rank\n  weight     +0.5000  tfidf\n  weight     +0.2500  tweak"}},
		{"pipeline", []string{pipeline}, false, []string{"stage 2    tweak (model tweak.model)", "      method     tweak", "builds     ok (against an empty index"}},
		{"pipeline against its index", []string{"--index", idx, pipeline}, false, []string{"builds     ok (against the index)"}},
		// The --index index given as a path too: read through the one open
		// (a second open waited for the first one's lock, then failed).
		{"index given twice", []string{"--index", idx, idx}, false, []string{idx + ": index"}},
		{"directory holding pipeline.yaml", []string{dir}, false, []string{"pipeline.yaml: pipeline", "builds     ok"}},
		{"index", []string{idx}, false, []string{"documents  ", "payload    tweak from tweak-"}},
		{"damaged model", []string{damaged}, true, []string{"corrupt model bundle"}},
		{"missing model", []string{missing}, true, []string{"absent.model"}},
		{"another model's payloads", []string{"--index", idx, otherPipeline}, true, []string{"was written by model tweak-"}},
		{"directory of neither kind", []string{t.TempDir()}, true, []string{"neither a semrank index nor a directory holding pipeline.yaml"}},
		{"not a model", []string{filepath.Join(data, "qrels", "test.tsv")}, true, []string{"is not a semrank model; inspect reads models, pipeline files"}},
		{"JSON pipeline", []string{jsonPipeline}, false, []string{"stage 2    tweak (model tweak.model)", "builds     ok"}},
		{"a stage's model does not load", []string{brokenModel}, true, []string{"error: models: open", "models that do not load"}},
		{"index lacks the pipeline's payloads", []string{"--index", bare, pipeline}, false, []string{"builds     ok (against the index)", `warning    the index lacks payload "tweak"`}},
		{"a stage's word vectors in word2vec form", []string{wordVectors}, false, []string{"stage 1    wmd (model vectors.txt)", "not a semrank model file", "builds     ok"}},
		{"pipeline listing its model's checksum", []string{summed}, false, []string{"builds     ok", "sha256     listed files unchanged since the pipeline was written (1)"}},
		{"pipeline whose model changed since", []string{missummed}, true, []string{"other.model is not the file the pipeline was written with"}},
		{"one bad path of two", []string{model, filepath.Join(dir, "nope")}, true, []string{"method     tweak", "nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := execute(append([]string{"inspect"}, tt.args...)...)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v\n%s", err, tt.wantErr, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestSearchWarnsOfGivenList: a pipeline whose fusion weighs the given
// rank, which a search never has, is used with a warning that says so.
func TestSearchWarnsOfGivenList(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, "idx")
	pipeline := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(pipeline, []byte("stages:\n  - type: tfidf\nfusion:\n  model: fusion.model\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		weights map[string]float64
		warns   bool
	}{
		{map[string]float64{"tfidf": 1, rerank.FeatureGivenRank: 0.5}, true},
		{map[string]float64{"tfidf": 1, rerank.FeatureFirstRank: 0.5}, false},
	} {
		if err := (&rerank.Linear{Weights: tc.weights}).Bundle().Save(filepath.Join(dir, "fusion.model")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(idx); err != nil {
			if out, err := execute("index", "--data", "../../testdata/tweak", "--index", idx); err != nil {
				t.Fatalf("index: %v\n%s", err, out)
			}
		}
		out, err := execute("search", "--index", idx, "--pipeline", pipeline, "bank account")
		if err != nil {
			t.Fatalf("search: %v\n%s", err, out)
		}
		if got := strings.Contains(out, "weighs given_rank (0.5), which only a given candidate list supplies"); got != tc.warns {
			t.Errorf("weights %v: warned %v, want %v:\n%s", tc.weights, got, tc.warns, out)
		}
	}
}

// TestInspectVerify: inspect --verify reads an index whole, and names a
// segment whose bit was flipped, where every command used to panic in
// zap; search and index refuse that index with an error naming the
// segment.
func TestInspectVerify(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, "idx")
	if out, err := execute("index", "--data", "../../testdata/tweak", "--index", idx); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	out, err := execute("inspect", "--verify", idx)
	if err != nil || !strings.Contains(out, "checksum ok") || !strings.Contains(out, "120 documents read back") {
		t.Fatalf("inspect --verify of a whole index: %v\n%s", err, out)
	}
	segs, _ := filepath.Glob(filepath.Join(idx, "store", "*.zap"))
	if len(segs) != 1 {
		t.Fatalf("segments %v, want one", segs)
	}
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-20] ^= 1
	if err := os.WriteFile(segs[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"inspect", "--verify", idx},
		{"inspect", "--verify", "--index", idx},
		{"inspect", idx},
		{"search", "--index", idx, "bank"},
		{"index", "--data", "../../testdata/tweak", "--index", idx},
	} {
		out, err := execute(args...)
		if err == nil || !strings.Contains(out+err.Error(), segs[0]) || !strings.Contains(out+err.Error(), "damaged") {
			t.Errorf("%v: err = %v, want one naming %s as damaged\n%s", args, err, segs[0], out)
		}
	}
}

// TestInspectVerifyPayloads: inspect --verify reads every record of the
// payload segments, and names one whose payload byte was flipped, which
// opening the index does not read.
func TestInspectVerifyPayloads(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	if out, err := execute("index", "--data", "../../testdata/tweak", "--index", idx); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	seg := filepath.Join(idx, "semrank_payloads", "terms.seg")
	out, err := execute("inspect", "--verify", idx)
	if err != nil || !strings.Contains(out, "semrank_payloads/terms.seg") {
		t.Fatalf("inspect --verify of a whole index: %v\n%s", err, out)
	}
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/3] ^= 1 // a record, in the first half of the file
	if err := os.WriteFile(seg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := execute("inspect", idx); err != nil {
		t.Errorf("inspect without --verify reads no record: %v\n%s", err, out)
	}
	out, err = execute("inspect", "--verify", idx)
	if err == nil || !strings.Contains(out+err.Error(), seg) || !strings.Contains(out, "DAMAGED") {
		t.Errorf("inspect --verify: err = %v, want one naming %s as damaged\n%s", err, seg, out)
	}
}
