package main

import (
	"fmt"
	"testing"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
)

// TestHint checks the commands the command line adds to library errors
// about something missing, however deep they are wrapped.
func TestHint(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("pipeline p.yaml: stage 2: %w", err) }
	tests := []struct {
		err  error
		want string
	}{
		{wrap(&rerank.NeedsModelError{Type: "lsa"}), "lsa needs a model file (semrank train lsa writes one)"},
		{wrap(&rerank.NeedsModelError{Type: "wmd", What: "word vectors as its model"}), "wmd needs word vectors as its model (semrank train embed writes word vectors; word2vec and GloVe files work too)"},
		{wrap(&rerank.NeedsModelError{Type: "ssg", What: "option topics: a topics model"}), "ssg needs option topics: a topics model (semrank train topics writes one)"},
		{wrap(&rerank.NeedsModelError{Type: "fusion lambdamart"}), "fusion lambdamart needs a model file (semrank train fusion --method lambdamart writes one)"},
		{wrap(&rerank.NeedsModelError{Type: "mystage"}), "mystage needs a model file"},
		{wrap(tweak.ErrNoCandidates), "tweak: dataset has no candidate lists (candidates.trec) (write them with semrank run --data DIR --index IDX --out DIR/candidates.trec)"},
		{wrap(fmt.Errorf("index: payload segment s.seg: record of \"d1\": checksum mismatch (%w)", index.ErrDamaged)),
			"index: payload segment s.seg: record of \"d1\": checksum mismatch (the index is damaged) (semrank inspect --verify --index PATH names every damaged file; rebuild the index, or restore it from a copy)"},
		{wrap(fmt.Errorf("index: fields a analyzed with en: %w", index.ErrNotCounted)),
			"index: fields a analyzed with en: no term counts made with that analyzer are attached to the index (semrank attach --index PATH --pipeline FILE computes them)"},
		{fmt.Errorf("other"), "other"},
	}
	for _, tt := range tests {
		want := tt.want
		if tt.err != nil && want != "other" {
			want = "pipeline p.yaml: stage 2: " + want
		}
		if got := withHint(tt.err); got != want {
			t.Errorf("withHint(%v) = %q, want %q", tt.err, got, want)
		}
	}
}
