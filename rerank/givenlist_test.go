package rerank

import (
	"maps"
	"testing"
)

// TestGivenListWeights: a fusion that weighs the given-list features says
// so, with the weight (linear) or the share of splits (trees); one that
// does not, or cannot, gives an empty map.
func TestGivenListWeights(t *testing.T) {
	split := func(feature int) Tree { // one split on feature, two leaves
		return Tree{Feature: []int{feature, 0, 0}, Threshold: []float64{0, 0, 0}, Left: []int{1, -1, -1}, Right: []int{2, -1, -1}, Value: []float64{0, -1, 1}}
	}
	features := []string{FeatureFirstRank, FeatureGivenRank, "raw:" + FeatureGivenRank, "tfidf"}
	for _, tc := range []struct {
		name   string
		fusion Fusion
		want   map[string]float64
	}{
		{"no fusion", nil, map[string]float64{}},
		{"linear without given_rank", &Linear{Weights: map[string]float64{FeatureFirstRank: 1, "tfidf": 2}}, map[string]float64{}},
		{"linear with given_rank 0", &Linear{Weights: map[string]float64{FeatureFirstRank: 1, FeatureGivenRank: 0}}, map[string]float64{}},
		{"linear with given_rank", &Linear{Weights: map[string]float64{FeatureFirstRank: 1, FeatureGivenRank: -2.5, "tfidf": 2}}, map[string]float64{FeatureGivenRank: -2.5}},
		{"rrf", &RRF{Weights: map[string]float64{FeatureFirstRank: 3}}, map[string]float64{}},
		{"trees not splitting on given_rank", &LambdaMART{Features: features, Rate: 1, Trees: []Tree{split(0), split(3)}}, map[string]float64{}},
		{"trees splitting on given_rank", &LambdaMART{Features: features, Rate: 1, Trees: []Tree{split(1), split(1), split(2), split(3)}},
			map[string]float64{FeatureGivenRank: 0.5, "raw:" + FeatureGivenRank: 0.25}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Pipeline{Fusion: tc.fusion}
			if got := p.GivenListWeights(); !maps.Equal(got, tc.want) {
				t.Errorf("GivenListWeights() = %v, want %v", got, tc.want)
			}
		})
	}
}
