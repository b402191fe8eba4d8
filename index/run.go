package index

// DistinctScore returns a score that orders like (score desc, rank asc)
// and never ties for different ranks: written runs keep semrank's order
// under trec_eval and the SemEval scorer alike.
func DistinctScore(score float64, rank int) float64 {
	return score - float64(rank)*1e-9
}
