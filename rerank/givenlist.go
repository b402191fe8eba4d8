package rerank

// GivenListWeights returns, by feature name, how much p's fusion relies on
// the features that exist only when the candidates come with a given
// candidate list (FeatureGivenRank; see Features): a pipeline trained on
// given lists (semrank rerank --data DIR over a candidates.trec) may weigh
// them, while a search that retrieves its candidates (a server, semrank
// search) never has them, so there its fusion runs without them and ranks
// differently from the evaluation.
//
// For a Linear fusion the value is the feature's weight; for LambdaMART
// it is the share of the trees' splits made on the feature. Features the
// fusion gives no weight are left out, so the map is empty for a pipeline
// that does not depend on given lists (and for RRF, which cannot weigh
// them, and no fusion).
func (p *Pipeline) GivenListWeights() map[string]float64 {
	out := map[string]float64{}
	switch f := unwrapFusion(p.Fusion).(type) {
	case *Linear:
		for n, w := range f.Weights {
			if givenListFeature(n) && w != 0 {
				out[n] = w
			}
		}
	case *LambdaMART:
		splits := map[int]int{}
		total := 0
		for _, t := range f.Trees {
			for node, left := range t.Left {
				if left >= 0 {
					splits[t.Feature[node]]++
					total++
				}
			}
		}
		for i, n := range f.Features {
			if givenListFeature(n) && splits[i] > 0 {
				out[n] = float64(splits[i]) / float64(total)
			}
		}
	}
	return out
}

// givenListFeature reports the features, z-normalised or raw, that only a
// given candidate list supplies.
func givenListFeature(name string) bool {
	return optionalFeature(name) || name == rawPrefix+FeatureGivenRank
}
