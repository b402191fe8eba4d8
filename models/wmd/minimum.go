package wmd

import "math"

// Minimum scans over short rows: the simplex's pricing and start and the
// dual bound spend most of their time in them. Each has an AVX kernel
// (dist_amd64.s) used where the processor has AVX; a minimum is exact, so
// both give the same values.

// minOf returns the smallest of xs (+Inf if empty).
func minOf(xs []float64) float64 {
	if hasAVX {
		if len(xs) == 0 {
			return math.Inf(1)
		}
		return minAVX(&xs[0], len(xs), math.Inf(1))
	}
	r := math.Inf(1)
	for _, x := range xs {
		r = min(r, x)
	}
	return r
}

// argMin returns the first index of the smallest of xs (non-empty, no
// NaN): the minimum, then a scan for it.
func argMin(xs []float64) int {
	lo := minOf(xs)
	for i, x := range xs {
		if x == lo {
			return i
		}
	}
	return 0
}

// minDiff returns min_j (row[j] − v[j]).
func minDiff(row, v []float64) float64 {
	v = v[:len(row)]
	if hasAVX {
		if len(row) == 0 {
			return math.Inf(1)
		}
		return minDiffAVX(&row[0], &v[0], len(row), math.Inf(1))
	}
	r := math.Inf(1)
	for j, c := range row {
		r = min(r, c-v[j])
	}
	return r
}

// minDiffCols returns min_j (row[j] − v[j]) and lowers cm[j] to
// row[j] − ui where that is smaller.
func minDiffCols(row, v, cm []float64, ui float64) float64 {
	v, cm = v[:len(row)], cm[:len(row)]
	if hasAVX {
		if len(row) == 0 {
			return math.Inf(1)
		}
		return minDiffColsAVX(&row[0], &v[0], &cm[0], len(row), ui, math.Inf(1))
	}
	r := math.Inf(1)
	for j, c := range row {
		r = min(r, c-v[j])
		cm[j] = min(cm[j], c-ui)
	}
	return r
}

// minAndCols returns min_j row[j] and lowers cm[j] to row[j] where that is
// smaller.
func minAndCols(row, cm []float64) float64 {
	cm = cm[:len(row)]
	if hasAVX {
		if len(row) == 0 {
			return math.Inf(1)
		}
		return minAndColsAVX(&row[0], &cm[0], len(row), math.Inf(1))
	}
	r := math.Inf(1)
	for j, c := range row {
		r = min(r, c)
		cm[j] = min(cm[j], c)
	}
	return r
}

// argDiff returns the first j with row[j] − v[j] = d.
func argDiff(row, v []float64, d float64) int {
	v = v[:len(row)]
	for j, c := range row {
		if c-v[j] == d {
			return j
		}
	}
	return -1
}
