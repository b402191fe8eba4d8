package wmd

// KNN used ICT between RWMD and the solver until the dual bound (bound.go)
// replaced it: on SemEval pairs the dual bound, for two passes over the
// cost matrix, lets through about 40% as many documents. It stays here as
// the reference the tests order the bounds against.

// ict is the Iterative Constrained Transfers lower bound of Atasu &
// Mittelholzer (2019): the transport problem with the demand constraints
// relaxed to per-edge capacities T_ij ≤ b_j, which each source solves
// alone by filling its nearest targets up to their demand. Dropping the
// capacities gives RWMD, so RWMD ≤ ICT ≤ WMD; the larger of the two
// one-sided bounds is returned. used is scratch space.
func ict(a, b, cost []float64, used []bool) (float64, []bool) {
	n, m := len(a), len(b)
	used = growBool(used, max(n, m))
	var lo [2]float64
	for side := 0; side < 2; side++ {
		src, dst := a, b
		// stride and step address cost[i][j] as cost[i*rs + j*cs].
		rs, cs := m, 1
		if side == 1 {
			src, dst = b, a
			rs, cs = 1, m
		}
		for i, w := range src {
			clear(used[:len(dst)])
			// Nearest targets first, by repeated minimum: a source's mass is
			// usually used up after two or three targets.
			for rem := w; rem > 0; {
				bj, bc := -1, 0.0
				for j := range dst {
					if c := cost[i*rs+j*cs]; !used[j] && (bj < 0 || c < bc) {
						bj, bc = j, c
					}
				}
				if bj < 0 {
					break
				}
				used[bj] = true
				f := min(rem, dst[bj])
				lo[side] += f * bc
				rem -= f
			}
		}
	}
	return max(lo[0], lo[1]), used
}
