package tweak

import (
	"slices"
	"testing"
)

// TestFuseEnds: λ = 0 is the first-stage order, λ = 1 the stage's own.
func TestFuseEnds(t *testing.T) {
	set := testSet(t, false)
	scores := set.TFIDFScores()
	order := func(s []float64) []string {
		run := set.Run(s)
		var ids []string
		for _, q := range run.QueryIDs() {
			for _, e := range run.Sorted(q) {
				ids = append(ids, e.DocID)
			}
		}
		return ids
	}
	if got, want := order(Fuse(set, scores, 0)), order(set.RankScores()); !slices.Equal(got, want) {
		t.Error("λ = 0 is not the first-stage order")
	}
	if got, want := order(Fuse(set, scores, 1)), order(scores); !slices.Equal(got, want) {
		t.Error("λ = 1 is not the stage's order")
	}
}
