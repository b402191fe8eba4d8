package rerank_test

import (
	"slices"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// mapStats is TermStats from a map, one term at a time.
type mapStats map[string]uint64

func (m mapStats) DocCount() (uint64, error)           { return uint64(len(m)), nil }
func (m mapStats) DocFreq(term string) (uint64, error) { return m[term], nil }

// TestDocFreqs: the batch lookup gives each term's DocFreq, from a
// BatchStats (index.Index) or term by term.
func TestDocFreqs(t *testing.T) {
	idx := newIndex(t, []dataset.Doc{{ID: "d1", Text: "bank account"}, {ID: "d2", Text: "bank loan"}})
	terms := []string{"bank", "loan", "unseen", "bank"}
	for _, tc := range []struct {
		name  string
		stats rerank.TermStats
		want  []uint64
	}{
		{"index", idx, []uint64{2, 1, 0, 2}},
		{"term by term", mapStats{"bank": 2, "loan": 1}, []uint64{2, 1, 0, 2}},
	} {
		got, err := rerank.DocFreqs(tc.stats, terms)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: DocFreqs = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
