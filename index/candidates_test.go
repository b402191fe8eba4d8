package index

import (
	"math"
	"testing"

	"github.com/blevesearch/bleve/v2/search"
)

// TestHitsFromStable checks that hits whose Bleve scores differ only in
// the last bits (as two builds of one index produce) come out with the
// same scores and in ID order, whatever order Bleve returned them in.
func TestHitsFromStable(t *testing.T) {
	base := 7.123456789
	up := math.Nextafter(base, 10)
	tests := []struct {
		name string
		in   []*search.DocumentMatch
		want []string
	}{
		{"near tie, Bleve order b a", []*search.DocumentMatch{{ID: "b", Score: up}, {ID: "a", Score: base}, {ID: "c", Score: 1}}, []string{"a", "b", "c"}},
		{"near tie, Bleve order a b", []*search.DocumentMatch{{ID: "a", Score: up}, {ID: "b", Score: base}, {ID: "c", Score: 1}}, []string{"a", "b", "c"}},
		{"clear order kept", []*search.DocumentMatch{{ID: "z", Score: 3}, {ID: "y", Score: 2}, {ID: "x", Score: 1}}, []string{"z", "y", "x"}},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := HitsFrom(tt.in)
			if len(hits) != len(tt.want) {
				t.Fatalf("%d hits, want %d", len(hits), len(tt.want))
			}
			for i, h := range hits {
				if h.ID != tt.want[i] || h.Rank != i+1 {
					t.Fatalf("hit %d = %s rank %d, want %s rank %d", i, h.ID, h.Rank, tt.want[i], i+1)
				}
				if h.Score != StableScore(h.Score) {
					t.Fatalf("hit %s score %v is not rounded", h.ID, h.Score)
				}
			}
			if len(hits) > 1 && tt.in[0].Score == up && hits[0].Score != hits[1].Score {
				t.Fatalf("scores %v and %v one ulp apart still differ", hits[0].Score, hits[1].Score)
			}
		})
	}
}
