package wmd

import "math"

// dualBound is a lower bound of the transport cost between a (n) and b (m)
// under cost (n×m), at least RWMD and on real sentence pairs much tighter
// than ICT, for two passes over the cost matrix.
//
// By weak duality any u, v with u_i + v_j ≤ c_ij give Σ_i a_i·u_i +
// Σ_j b_j·v_j ≤ WMD. Starting from u = 0, the best v is the column minima
// v_j = min_i c_ij, which is one side of RWMD; the best u for that v is
// u_i = min_j (c_ij − v_j) ≥ 0, which can only raise the bound (one step
// of block coordinate ascent on the dual). The same from v = 0 (row minima
// first) gives the other side; the larger of the two is returned.
//
// When RWMD, known after the first pass, already exceeds cut, it is
// returned without the second pass. rwmd is then RWMD exactly.
type dualBound struct {
	rowMin, colMin, vB []float64
	rows               [][]float64
}

func (d *dualBound) bound(a, b, cost []float64, cut float64) (lb, rwmd float64) {
	m := len(b)
	d.rows = d.rows[:0]
	for i := range a {
		d.rows = append(d.rows, cost[i*m:i*m+m])
	}
	return d.boundRows(a, b, d.rows, cut)
}

// boundRows is bound with the cost matrix given by its rows.
func (d *dualBound) boundRows(a, b []float64, rows [][]float64, cut float64) (lb, rwmd float64) {
	n, m := len(a), len(b)
	d.rowMin, d.colMin, d.vB = grow(d.rowMin, n), grow(d.colMin, m), grow(d.vB, m)
	rmin, cmin, vB := d.rowMin, d.colMin, d.vB
	inf := math.Inf(1)
	for j := range cmin {
		cmin[j], vB[j] = inf, inf
	}
	var ra, rb float64
	for i := 0; i < n; i++ {
		rmin[i] = minAndCols(rows[i], cmin)
		ra += a[i] * rmin[i]
	}
	for j, w := range b {
		rb += w * cmin[j]
	}
	rwmd = max(ra, rb)
	if rwmd > cut {
		return rwmd, rwmd
	}
	// A: v = column minima, then u_i = min_j (c_ij − v_j).
	// B: u = row minima, then v_j = min_i (c_ij − u_i).
	lbA, lbB := rb, ra
	for i := 0; i < n; i++ {
		lbA += a[i] * minDiffCols(rows[i], cmin, vB, rmin[i])
	}
	for j, w := range b {
		lbB += w * vB[j]
	}
	return max(lbA, lbB, rwmd), rwmd
}

// warm is the dual bound seeded with query-side potentials u (of another
// document's optimal plan, say): v_j = min_i (c_ij − u_i), then ũ_i =
// min_j (c_ij − v_j), and Σ_i a_i·ũ_i + Σ_j b_j·v_j ≤ WMD by weak duality.
func (d *dualBound) warm(a, b, cost, u []float64) float64 {
	n, m := len(a), len(b)
	d.colMin, d.vB = grow(d.colMin, m), grow(d.vB, m)
	v, zero := d.colMin, d.vB
	inf := math.Inf(1)
	for j := range v {
		v[j], zero[j] = inf, 0
	}
	for i := 0; i < n; i++ {
		minDiffCols(cost[i*m:i*m+m], zero, v, u[i])
	}
	var lb float64
	for j, w := range b {
		lb += w * v[j]
	}
	for i := 0; i < n; i++ {
		lb += a[i] * minDiff(cost[i*m:i*m+m], v)
	}
	return lb
}

// The two kernels below run the dual bounds over rows of the search's
// distance cache: the rows of base (stride values each, stride a multiple
// of 4, +Inf in the padding past the query's words) named by ids, one
// document's words. One call scans a whole document, where calling a row
// kernel per row costs more in calls than in arithmetic on rows of
// twenty-odd values.

// rowColMin sets r[i] to the minimum of the i-th row (ids[i]) and cm[k] to
// min_i of the rows' k-th values, for every k < stride.
func rowColMin(base []float64, stride int, ids []int32, r, cm []float64) {
	cm, r = cm[:stride], r[:len(ids)]
	if hasAVX {
		if len(ids) > 0 {
			rowColMinAVX(&base[0], stride, &ids[0], len(ids), &r[0], &cm[0], math.Inf(1))
			return
		}
	}
	for k := range cm {
		cm[k] = math.Inf(1)
	}
	for i, w := range ids {
		row := base[int(w)*stride : int(w)*stride+stride]
		ri := math.Inf(1)
		for k, c := range row {
			ri = min(ri, c)
			cm[k] = min(cm[k], c)
		}
		r[i] = ri
	}
}

// rowsDual is one step of block coordinate ascent on the dual over the
// rows in ids: for the i-th row, r[i] = min_k (row[k] − sub[k]); and
// cm[k] = min_i (row[k] − s_i) with s_i = rsub[i], or r[i] itself when
// rsub is nil. sub must be −Inf in the padding so that a padded lane
// (+Inf − −Inf) never gives r[i]; cm's padding is meaningless.
func rowsDual(base []float64, stride int, ids []int32, sub, rsub, r, cm []float64) {
	sub, cm, r = sub[:stride], cm[:stride], r[:len(ids)]
	if hasAVX {
		if len(ids) > 0 {
			var rs *float64
			if rsub != nil {
				rs = &rsub[0]
			}
			rowsDualAVX(&base[0], stride, &ids[0], len(ids), &sub[0], rs, &r[0], &cm[0], math.Inf(1))
			return
		}
	}
	for k := range cm {
		cm[k] = math.Inf(1)
	}
	for i, w := range ids {
		row := base[int(w)*stride : int(w)*stride+stride]
		ri := math.Inf(1)
		for k, c := range row {
			ri = min(ri, c-sub[k])
		}
		r[i] = ri
		si := ri
		if rsub != nil {
			si = rsub[i]
		}
		for k, c := range row {
			cm[k] = min(cm[k], c-si)
		}
	}
}
