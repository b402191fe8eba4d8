package tweak

import "math"

// Fuse combines a stage's scores with the first-stage rank, per query:
// λ·z(score) + (1−λ)·z(−rank), z the z-score over the query's candidates
// (0 where a query's values are all equal).
func Fuse(set *Set, scores []float64, lambda float64) []float64 {
	out := make([]float64, len(scores))
	ranks := make([]float64, len(scores))
	for i, p := range set.pairs {
		ranks[i] = -float64(p.rank)
	}
	for _, q := range set.queries {
		zs, zr := zscore(scores[q.begin:q.end]), zscore(ranks[q.begin:q.end])
		for i := range zs {
			out[q.begin+i] = lambda*zs[i] + (1-lambda)*zr[i]
		}
	}
	return out
}

func zscore(x []float64) []float64 {
	var mean, sq float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sq += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(sq / float64(len(x)))
	out := make([]float64, len(x))
	if sd == 0 {
		return out
	}
	for i, v := range x {
		out[i] = (v - mean) / sd
	}
	return out
}
