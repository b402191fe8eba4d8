package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/publish"
)

// TestTrainFusionInPlace retrains the fusion model a pipeline lists under
// sha256 in place: the pipeline's line is updated and the pipeline keeps
// loading, with the new model.
func TestTrainFusionInPlace(t *testing.T) {
	dir := t.TempDir()
	fusion := filepath.Join(dir, "fusion.model")
	if err := (&rerank.Linear{Weights: map[string]float64{"tfidf": 1, rerank.FeatureFirstRank: 1}}).Bundle().Save(fusion); err != nil {
		t.Fatal(err)
	}
	c := &rerank.Config{Stages: []rerank.StageSpec{{Type: "tfidf"}}, Fusion: rerank.FusionSpec{Model: "fusion.model"}}
	if err := publish.RecordChecksums(c, dir, "fusion.model"); err != nil {
		t.Fatal(err)
	}
	pipeline := filepath.Join(dir, "pipeline.yaml")
	if err := rerank.WriteConfig(pipeline, c); err != nil {
		t.Fatal(err)
	}
	before, err := rerank.FileSHA256(fusion)
	if err != nil {
		t.Fatal(err)
	}
	out, err := execute("train", "fusion", "--data", "../../testdata/tweak", "--pipeline", pipeline, "--out", fusion)
	if err != nil {
		t.Fatalf("train fusion: %v\n%s", err, out)
	}
	if !strings.Contains(out, "updated the sha256 of "+fusion) {
		t.Errorf("output does not say the checksum was updated:\n%s", out)
	}
	after, err := rerank.FileSHA256(fusion)
	if err != nil {
		t.Fatal(err)
	}
	if after == before {
		t.Fatal("the fusion model was not retrained")
	}
	if out, err := execute("inspect", pipeline); err != nil {
		t.Errorf("inspect after retraining in place: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(pipeline)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), after) {
		t.Errorf("pipeline does not list the new checksum %s:\n%s", after, raw)
	}
}

// TestTrainFusionInPlaceKeepsMethod: retraining the pipeline's fusion
// model in place with another method is refused before any work, and the
// model is left as it was.
func TestTrainFusionInPlaceKeepsMethod(t *testing.T) {
	dir := t.TempDir()
	fusion := filepath.Join(dir, "fusion.model")
	if err := (&rerank.Linear{Weights: map[string]float64{"tfidf": 1}}).Bundle().Save(fusion); err != nil {
		t.Fatal(err)
	}
	pipeline := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(pipeline, []byte("stages:\n  - type: tfidf\nfusion:\n  model: fusion.model\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(fusion)
	out, err := execute("train", "fusion", "--data", "../../testdata/tweak", "--pipeline", pipeline, "--method", "lambdamart", "--out", fusion)
	if err == nil || !strings.Contains(err.Error(), "is the linear fusion model") {
		t.Fatalf("err = %v, want a refusal naming the pipeline's method\n%s", err, out)
	}
	if after, _ := os.ReadFile(fusion); string(after) != string(before) {
		t.Error("the fusion model changed")
	}
}

// TestRetrainListedModelNotes: retraining, in place, a model that the
// pipeline beside it lists under sha256 says that the pipeline will
// refuse it until its line is updated.
func TestRetrainListedModelNotes(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "models", "tweak.model")
	if err := os.MkdirAll(filepath.Dir(model), 0o755); err != nil {
		t.Fatal(err)
	}
	train := []string{"train", "tweak", "--data", "../../testdata/tweak", "--out", model}
	out, err := execute(train...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, "note:") {
		t.Errorf("a note without a pipeline:\n%s", out)
	}
	c := &rerank.Config{Stages: []rerank.StageSpec{{Type: "tweak", Model: "models/tweak.model"}}}
	if err := publish.RecordChecksums(c, dir, "models/tweak.model"); err != nil {
		t.Fatal(err)
	}
	pipeline := filepath.Join(dir, "pipeline.yaml")
	if err := rerank.WriteConfig(pipeline, c); err != nil {
		t.Fatal(err)
	}
	out, err = execute(append(train, "--alpha", "0.3")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if want := "note: " + pipeline + " lists " + model + " under sha256"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// TestTrainFusionMethodFlags checks that one fusion method's flags are
// refused for the other, before any work: linear fusion ignored --valid,
// --trees and --leaves, and lambdamart --loss and --l2.
func TestTrainFusionMethodFlags(t *testing.T) {
	dir := t.TempDir()
	pipeline := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(pipeline, []byte("stages:\n  - type: tfidf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "fusion.model")
	tests := []struct {
		flags []string
		want  string
	}{
		{[]string{"--valid", "../../testdata/concepts/semeval-b"}, "--valid applies to --method lambdamart only"},
		{[]string{"--method", "linear", "--trees", "50"}, "--trees applies to --method lambdamart only"},
		{[]string{"--leaves", "4"}, "--leaves applies to --method lambdamart only"},
		{[]string{"--method", "lambdamart", "--loss", "logistic"}, "--loss applies to --method linear only"},
		{[]string{"--method", "lambdamart", "--l2", "0.1"}, "--l2 applies to --method linear only"},
	}
	for _, tt := range tests {
		args := append([]string{"train", "fusion", "--data", "../../testdata/tweak", "--pipeline", pipeline, "--out", out}, tt.flags...)
		if _, err := execute(args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want %q", tt.flags, err, tt.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%v: %s written (stat: %v)", tt.flags, out, err)
		}
	}
}
