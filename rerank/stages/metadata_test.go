package stages

import (
	"testing"

	"github.com/semrank/semrank/models/deepmatch"
	"github.com/semrank/semrank/rerank"
)

// TestReadsMetadata: the stages that read candidates' metadata, always
// or as configured, say so (or do not say, which a search takes as
// reading it); the others do not, so that searches skip decoding it.
func TestReadsMetadata(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stage rerank.Stage
		want  bool
	}{
		{"wmd", &WMD{}, false},
		{"ssg", &SSG{}, false},
		{"bm25", &BM25{}, false},
		{"tfidf", &TFIDF{}, false},
		{"tfidf over a metadata field", &TFIDF{Field: "user_name"}, true},
		{"deepmatch", &DeepMatch{Model: &deepmatch.Model{}}, false},
		{"deepmatch with meta tokens", &DeepMatch{Model: &deepmatch.Model{Config: deepmatch.Config{Meta: true}}}, true},
		{"meta", &Meta{}, true},
		{"thread", &Thread{}, true},
		{"quality", &Quality{}, true},
	} {
		got := true
		if r, ok := tc.stage.(rerank.MetadataReader); ok {
			got = r.ReadsMetadata()
		}
		if got != tc.want {
			t.Errorf("%s reads metadata: %v, want %v", tc.name, got, tc.want)
		}
	}
}
