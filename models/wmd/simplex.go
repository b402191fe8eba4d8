package wmd

import "math"

// simplex solves the transportation problem by the network simplex method
// specialised to a complete bipartite graph (the transportation simplex,
// also called MODI): a basis is a spanning tree of n+m−1 cells over the n
// row and m column nodes, potentials satisfy u_i + v_j = c_ij on the tree,
// and a pivot brings in a cell of negative reduced cost c_ij − u_i − v_j,
// moving flow around the cycle it closes in the tree.
//
// Start: the least-cost rule (ship as much as possible along the cheapest
// cell of open row and column, close one of the two), which on WMD
// problems leaves a few dozen pivots.
//
// Pricing: a full pass finds every row's most negative reduced cost; those
// cells (at most one per row) form a candidate list, and minor iterations
// enter the most negative of them, re-priced with the current potentials,
// until none is negative; then a new full pass. This takes a few more
// pivots than Dantzig's rule over all cells but a third of the full
// passes.
//
// Layout, chosen for problems of tens of words a side: flows and costs are
// dense n×m row-major arrays; the tree, rooted at row 0, is a parent
// array with subtree sizes and potentials, and its nodes in preorder (a
// subtree is then one contiguous block of that order). A pivot walks the
// two tree paths up from the entering cell to their common ancestor (the
// node of smaller subtree is never the ancestor, so sizes stand in for
// depths), moves flow around the cycle, and re-hangs only the subtree cut
// off by the leaving cell: re-rooted at the entering cell's endpoint, its
// block is rewritten in the new preorder from the old blocks along the
// reversed path, moved next to its new parent, and its potentials
// recomputed from their parents in one pass over the block, each as
// before from its parent's, so the pivots and results are those of a walk
// by adjacency. No adjacency is kept past the start: on WMD problems the
// subtree is about half the tree, and walking it by adjacency, with the
// adjacency's upkeep, was a third of the solver's time.
// The leaving cell is chosen by Cunningham's strongly feasible rule (the
// last blocking cell met walking the cycle from the apex in the entering
// cell's direction), which avoids cycling on degenerate pivots.
//
// Bounds: with a cutoff, each full pass also builds dual feasible
// solutions from the potentials (see cut), whose objectives are lower
// bounds on the optimum by weak duality; solve stops as soon as one
// exceeds the cutoff, which is what k-NN search needs to discard a
// document. Without a cutoff, or when the cutoff is never exceeded, the
// pivots and the result are the same.
//
// A float tolerance guards optimality (reduced costs below −eps enter);
// the pivot budget guards against cycling that rounding could still cause,
// and the caller then falls back to successive shortest paths.
type simplex struct {
	n, m    int
	x       []float64 // flow, n×m row-major; non-zero only on basic cells
	pi      []float64 // potentials: rows u_i at i, columns v_j at n+j
	parent  []int32   // tree parent of every node; −1 at the root (row 0)
	size    []int32   // nodes in each node's subtree, itself included
	order   []int32   // the nodes in preorder
	pos     []int32   // each node's index in order
	block   []int32   // pivot: the re-hung subtree's new preorder
	adj     []int32   // start: tree neighbours, node a's at adj[a*stride : a*stride+deg[a]]
	deg     []int32
	stride  int
	stack   []int32
	pathP   []int32   // cycle: nodes from the entering row up to the apex (exclusive)
	pathQ   []int32   // and from the entering column up to the apex
	pathR   []int32   // pivot: the re-hung subtree's new root up to its old one
	open    []bool    // start: rows then columns not yet crossed out
	rowMin  []int32   // start: each open row's cheapest open column
	rowCost []float64 // and its cost
	work    []float64 // start: the costs, +Inf in closed columns
	win     []int32   // start: tournament tree over rowCost
	pivots  int       // pivots of the last solve (tests)
	scans   int       // full pricing passes of the last solve
	candI   []int32   // partial pricing: each row's most negative cell at the last full pass
	candJ   []int32
	colMin  []float64 // bounded pricing: min_i (c_ij − u_i)
	lb      float64   // the bound that cut the last solve short
}

func (s *simplex) init(n, m int) {
	s.n, s.m = n, m
	N := n + m
	s.x = grow(s.x, n*m)
	clear(s.x)
	s.pi = grow(s.pi, N)
	s.parent = growInt(s.parent, N)
	s.size = growInt(s.size, N)
	s.order = growInt(s.order, N)
	s.pos = growInt(s.pos, N)
	s.stride = max(n, m)
	s.adj = growInt(s.adj, N*s.stride)
	s.deg = growInt(s.deg, N)
	clear(s.deg)
	s.stack = growInt(s.stack, N)[:0]
	s.open = growBool(s.open, N)
	s.rowMin = growInt(s.rowMin, n)
	s.rowCost = grow(s.rowCost, 2*n)
	s.work = grow(s.work, n*m)
	s.colMin = grow(s.colMin, m)
}

// link adds the tree edge between row i and column j (node n+j).
func (s *simplex) link(i, j int32) {
	J := j + int32(s.n)
	s.adj[int(i)*s.stride+int(s.deg[i])] = J
	s.deg[i]++
	s.adj[int(J)*s.stride+int(s.deg[J])] = i
	s.deg[J]++
}

// start builds the least-cost initial basis: repeatedly ship as much as
// possible along the cheapest cell whose row and column are both still
// open, then close exactly one of them (both at the very end), which gives
// n+m−1 basic cells forming a spanning tree. sup and dem are consumed.
func (s *simplex) start(sup, dem, cost []float64) {
	n, m := s.n, s.m
	rowOK, colOK := s.open[:n], s.open[n:]
	for k := range s.open {
		s.open[k] = true
	}
	// Each open row's cheapest open column and its cost (+Inf once the
	// row closes), refreshed only when needed, from a copy of the costs
	// whose closed columns are +Inf.
	rc, work := s.rowCost, s.work
	copy(work, cost)
	rowBest := func(i int) {
		r := work[i*m : i*m+m]
		j := argMin(r)
		s.rowMin[i], rc[i] = int32(j), r[j]
	}
	for i := 0; i < n; i++ {
		rowBest(i)
	}
	// A tournament tree over the rows finds the smallest entry: win[v] is
	// the row of smallest entry (the first of equals) under node v, the
	// leaves P+i holding row i (rows n..P−1 are +Inf padding).
	P := 1
	for P < n {
		P *= 2
	}
	rc = rc[:P]
	for i := n; i < P; i++ {
		rc[i] = math.Inf(1)
	}
	win := growInt(s.win, 2*P)
	s.win = win
	for i := 0; i < P; i++ {
		win[P+i] = int32(i)
	}
	better := func(v int) int32 {
		a, b := win[2*v], win[2*v+1]
		w := a
		if rc[b] < rc[a] {
			w = b // a conditional move: no branch to mispredict
		}
		return w
	}
	for v := P - 1; v >= 1; v-- {
		win[v] = better(v)
	}
	update := func(i int) {
		for v := (P + i) / 2; v >= 1; v /= 2 {
			win[v] = better(v)
		}
	}
	rows, cols := n, m
	for {
		// The open row of cheapest open cell. A row's entry goes stale
		// when its column closes; stale entries can only be too low, so
		// refreshing the minimum until it is fresh finds the true one.
		var bi, bj int
		for {
			bi = int(win[1])
			if bj = int(s.rowMin[bi]); colOK[bj] {
				break
			}
			rowBest(bi)
			update(bi)
		}
		f := min(sup[bi], dem[bj])
		s.x[bi*m+bj] = f
		s.link(int32(bi), int32(bj))
		sup[bi] -= f
		dem[bj] -= f
		switch {
		case rows == 1 && cols == 1:
			return
		case (sup[bi] <= dem[bj] || cols == 1) && rows > 1:
			rowOK[bi] = false
			rc[bi] = math.Inf(1)
			update(bi)
			rows--
		default:
			colOK[bj] = false
			cols--
			for k := bj; k < len(work); k += m {
				work[k] = math.Inf(1)
			}
		}
	}
}

// hang builds the tree of the start's basis from its adjacency: parent,
// preorder, subtree sizes and potentials (row 0's is 0).
func (s *simplex) hang(cost []float64) {
	n, m, stride := int32(s.n), s.m, s.stride
	pi, parent, adj, deg := s.pi, s.parent, s.adj, s.deg
	parent[0], pi[0] = -1, 0
	order := s.order[:0]
	st := append(s.stack[:0], 0)
	for len(st) > 0 {
		a := st[len(st)-1]
		st = st[:len(st)-1]
		order = append(order, a)
		pa, ua := parent[a], pi[a]
		for _, b := range adj[int(a)*stride : int(a)*stride+int(deg[a])] {
			if b != pa {
				pi[b], parent[b] = s.edgeCost(b, a, n, m, cost)-ua, a
				st = append(st, b)
			}
		}
	}
	s.stack = st
	for k, a := range order {
		s.pos[a], s.size[a] = int32(k), 1
	}
	for k := len(order) - 1; k > 0; k-- {
		s.size[parent[order[k]]] += s.size[order[k]]
	}
}

// edgeCost is the cost of the cell joining node a to its neighbour b.
func (s *simplex) edgeCost(a, b, n int32, m int, cost []float64) float64 {
	if a < n {
		return cost[int(a)*m+int(b-n)]
	}
	return cost[int(b)*m+int(a-n)]
}

// rehang moves the subtree of out, whose parent edge has just left the
// basis, under top, re-rooted at root (the entering cell's endpoint in
// that subtree): parents reversed along the path from root up to out,
// sizes, preorder and the subtree's potentials updated. apex is the
// cycle's top, above which no subtree size changes.
func (s *simplex) rehang(out, root, top, apex int32, cost []float64) {
	n, m := int32(s.n), s.m
	parent, size, order, pos, pi := s.parent, s.size, s.order, s.pos, s.pi
	S := size[out]
	po := parent[out]
	path := s.pathR[:0]
	for x := root; ; x = parent[x] {
		path = append(path, x)
		if x == out {
			break
		}
	}
	s.pathR = path
	// The new preorder: root's old subtree, then each node up the path
	// followed by its old subtree less the part already laid out.
	blk := append(s.block[:0], order[pos[root]:pos[root]+size[root]]...)
	for i := 1; i < len(path); i++ {
		w, c := path[i], path[i-1]
		blk = append(blk, w)
		blk = append(blk, order[pos[w]+1:pos[c]]...)
		blk = append(blk, order[pos[c]+size[c]:pos[w]+size[w]]...)
	}
	s.block = blk
	for i := len(path) - 1; i >= 1; i-- {
		size[path[i]] = S - size[path[i-1]]
		parent[path[i]] = path[i-1]
	}
	size[root], parent[root] = S, top
	for x := po; x != apex; x = parent[x] {
		size[x] -= S
	}
	for x := top; x != apex; x = parent[x] {
		size[x] += S
	}
	// Move the block next to top (its first child) and renumber what moved.
	ps, pt := pos[out], pos[top]
	var lo, hi int32
	if pt < ps {
		copy(order[pt+1+S:ps+S], order[pt+1:ps])
		lo, hi = pt+1, ps+S
	} else {
		copy(order[ps:pt+1-S], order[ps+S:pt+1])
		lo, hi = ps, pt+1
		pt -= S
	}
	copy(order[pt+1:pt+1+S], blk)
	for k := lo; k < hi; k++ {
		pos[order[k]] = k
	}
	// Potentials from each parent, parents first (the block is preorder).
	for _, x := range blk {
		px := parent[x]
		pi[x] = s.edgeCost(x, px, n, m, cost) - pi[px]
	}
}

// Outcomes of solve.
const (
	simplexOptimal = iota
	simplexCut     // the lower bound passed the cutoff
	simplexBudget  // out of pivots
)

// solve runs the simplex from the least-cost start. It returns the optimal
// cost; or, with cutoff < +Inf, as soon as the dual lower bound exceeds
// cutoff, that bound and simplexCut; or simplexBudget when the pivot
// budget ran out. a and b are the masses (b already scaled to a's), sup
// and dem scratch copies of them that the start consumes; eps is the
// reduced-cost tolerance.
func (s *simplex) solve(a, b, sup, dem, cost []float64, eps, cutoff float64) (float64, int) {
	n, m := s.n, s.m
	s.start(sup, dem, cost)
	s.hang(cost)
	budget := 50*(n+m) + 200
	bound := !math.IsInf(cutoff, 1)
	s.pivots, s.scans = 0, 0
	v := s.pi[n : n+m]
	for {
		// Full pricing: every row's most negative reduced cost.
		s.scans++
		ci, cj := s.candI[:0], s.candJ[:0]
		var lb float64 // Σ_i a_i·min_j (c_ij − v_j)
		cm := s.colMin
		if bound {
			for j := range cm {
				cm[j] = math.Inf(1)
			}
		}
		for i := 0; i < n; i++ {
			row := cost[i*m : i*m+m]
			var rmin float64
			if bound {
				rmin = minDiffCols(row, v, cm, s.pi[i])
			} else {
				rmin = minDiff(row, v)
			}
			if rmin-s.pi[i] < -eps {
				ci = append(ci, int32(i))
				cj = append(cj, int32(argDiff(row, v, rmin)))
			}
			lb += a[i] * rmin
		}
		s.candI, s.candJ = ci, cj
		if len(ci) == 0 {
			break
		}
		if bound && s.cut(a, b, cost, lb, cutoff) {
			return s.lb, simplexCut
		}
		// Minor iterations (partial pricing): enter the most negative of
		// those cells, re-priced with the current potentials, until none
		// is negative; then price everything again.
		for {
			bk, br := -1, -eps
			for k, i := range ci {
				j := cj[k]
				if r := cost[int(i)*m+int(j)] - s.pi[i] - v[j]; r < br {
					bk, br = k, r
				}
			}
			if bk < 0 {
				break
			}
			if s.pivots == budget {
				return 0, simplexBudget
			}
			s.pivots++
			s.pivot(ci[bk], cj[bk], cost)
		}
	}
	var total float64
	for k, f := range s.x {
		if f != 0 {
			total += f * cost[k]
		}
	}
	return total, simplexOptimal
}

// pivot brings cell (p, q), of negative reduced cost, into the basis.
func (s *simplex) pivot(p, q int32, cost []float64) {
	n, m := int32(s.n), int32(s.m)
	// The cycle: tree paths from row p and column n+q up to their apex.
	// Pushing θ along p → q, the cells on q's side whose lower node is a
	// column lose flow, and on p's side those whose lower node is a row.
	a, b := p, n+q
	pp, pq := s.pathP[:0], s.pathQ[:0]
	for a != b {
		if s.size[a] < s.size[b] {
			pp = append(pp, a)
			a = s.parent[a]
		} else {
			pq = append(pq, b)
			b = s.parent[b]
		}
	}
	s.pathP, s.pathQ = pp, pq
	// Strongly feasible rule: the blocking cell nearest p on p's side
	// (strict <), else the one nearest the apex on q's side (≤, so it wins
	// ties against p's side).
	theta, out, outP := math.Inf(1), int32(-1), false
	for _, w := range pp {
		if w < n {
			if f := s.x[int(w)*int(m)+int(s.parent[w]-n)]; f < theta {
				theta, out, outP = f, w, true
			}
		}
	}
	for _, w := range pq {
		if w >= n {
			if f := s.x[int(s.parent[w])*int(m)+int(w-n)]; f <= theta {
				theta, out, outP = f, w, false
			}
		}
	}
	for _, w := range pp {
		if w < n {
			s.x[int(w)*int(m)+int(s.parent[w]-n)] -= theta
		} else {
			s.x[int(s.parent[w])*int(m)+int(w-n)] += theta
		}
	}
	for _, w := range pq {
		if w >= n {
			s.x[int(s.parent[w])*int(m)+int(w-n)] -= theta
		} else {
			s.x[int(w)*int(m)+int(s.parent[w]-n)] += theta
		}
	}
	po := s.parent[out]
	if out < n {
		s.x[int(out)*int(m)+int(po-n)] = 0
	} else {
		s.x[int(po)*int(m)+int(out-n)] = 0
	}
	s.x[int(p)*int(m)+int(q)] = theta
	// The subtree under out holds p (outP) or n+q; it now hangs from the
	// other endpoint of the entering cell.
	root, top := n+q, p
	if outP {
		root, top = p, n+q
	}
	s.rehang(out, root, top, a, cost)
}

// cut reports whether the current potentials prove the optimum exceeds
// cutoff, and then leaves the proof's bound in s.lb. Three dual feasible
// solutions are tried, all by weak duality (Σ_i a_i·u_i + Σ_j b_j·v_j ≤
// optimum whenever u_i + v_j ≤ c_ij): (û, v) with û_i = min_j (c_ij − v_j),
// whose a-part lbRow the pricing pass already summed; (u, v̂) with v̂_j =
// min_i (c_ij − u_i), the column minima that pass also kept in colMin; and
// (ũ, v̂) with ũ_i = min_j (c_ij − v̂_j), one more step of block coordinate
// ascent. The last is usually the tightest: on real sentence pairs it lets
// most searches discard a document at the first pricing pass.
func (s *simplex) cut(a, b, cost []float64, lbRow, cutoff float64) bool {
	n, m := s.n, s.m
	u, v, cm := s.pi[:n], s.pi[n:n+m], s.colMin
	var bv, bvh, au float64
	for j, w := range b {
		bv += w * v[j]
		bvh += w * cm[j]
	}
	if lb := lbRow + bv; lb > cutoff {
		s.lb = lb
		return true
	}
	for i, w := range a {
		au += w * u[i]
	}
	if lb := au + bvh; lb > cutoff {
		s.lb = lb
		return true
	}
	lb := bvh
	for i, w := range a {
		lb += w * minDiff(cost[i*m:i*m+m], cm)
	}
	s.lb = lb
	return lb > cutoff
}
