package recipe

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/rerank"
)

// TestWithVectors checks that the pre-trained vectors go to the wmd and
// ssg stages that train theirs, as an absolute path, without touching the
// caller's specs, and that unusable settings are refused.
func TestWithVectors(t *testing.T) {
	const glove = "../../testdata/embed/glove-slice.txt"
	abs, err := filepath.Abs(glove)
	if err != nil {
		t.Fatal(err)
	}
	specs := []rerank.StageSpec{
		{Type: "tfidf"},
		{Type: "wmd"},
		{Type: "ssg", Options: map[string]any{"topics_k": 5}},
		{Type: "wmd", Name: "given", Model: "v.embed"},
	}
	got, err := WithVectors(specs, glove)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range got {
		v, set := s.Options["embed_init"]
		if want := i == 1 || i == 2; set != want || set && v != abs {
			t.Errorf("stage %d (%s): embed_init %v (set %v)", i, s.DisplayName(s.Type), v, set)
		}
	}
	if got[2].Options["topics_k"] != 5 {
		t.Errorf("ssg lost its options: %v", got[2].Options)
	}
	if _, set := specs[2].Options["embed_init"]; set || specs[1].Options != nil {
		t.Error("the caller's specs were changed")
	}
	for _, tc := range []struct {
		specs []rerank.StageSpec
		path  string
		want  string
	}{
		{specs, "../../testdata/embed/nowhere.txt", "no such file"},
		{specs, "../../testdata/embed", "is a directory"},
		{specs[:1], glove, "no stage learns word vectors"},
		{specs[3:], glove, "no stage learns word vectors"},
	} {
		if _, err := WithVectors(tc.specs, tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s over %d specs: error %v, want one mentioning %q", tc.path, len(tc.specs), err, tc.want)
		}
	}
}

// TestUnsupervisedNote checks what the unsupervised recipe's report says
// it fused: its own stages name what they leave out, stages given with
// --stages do not, and fine-tuned vectors are said.
func TestUnsupervisedNote(t *testing.T) {
	specs := UnsupervisedStages()
	names := strings.Join(stageNames(specs), ",")
	if !strings.Contains(names, "tfidf") || strings.Contains(names, "overlap") {
		t.Errorf("unsupervised stages %s: want tfidf in and overlap out", names)
	}
	for _, tc := range []struct {
		fusion          string
		custom, vectors bool
		want, lacks     []string
	}{
		{"", false, false, []string{"stages kept: " + strings.Join(stageNames(specs), ", "), "left out: overlap", "agreement"}, []string{"--vectors", "fixed"}},
		{"equal", true, true, []string{"stages kept: ", "fine-tuned from --vectors", "fixed equal weights"}, []string{"left out", "agreement"}},
	} {
		got := unsupervisedNote(specs, tc.fusion, tc.custom, tc.vectors)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("custom %v, vectors %v: %q lacks %q", tc.custom, tc.vectors, got, w)
			}
		}
		for _, w := range tc.lacks {
			if strings.Contains(got, w) {
				t.Errorf("custom %v, vectors %v: %q says %q", tc.custom, tc.vectors, got, w)
			}
		}
	}
}
