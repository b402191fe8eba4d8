package wmd

import "math"

// simplex solves the transportation problem by the network simplex method
// specialised to a complete bipartite graph (the transportation simplex,
// also called MODI): a basis is a spanning tree of n+m−1 cells over the n
// row and m column nodes, potentials satisfy u_i + v_j = c_ij on the tree,
// and a pivot brings in the cell of most negative reduced cost
// c_ij − u_i − v_j, moving flow around the cycle it closes in the tree.
//
// For the small, dense problems of WMD (tens of words a side) this needs a
// few dozen pivots of O(n·m) each, far fewer operations than successive
// shortest paths, whose every augmentation runs Dijkstra over all n·m arcs.
// Degenerate pivots can in principle cycle; solve gives up after a pivot
// budget and the caller falls back to successive shortest paths, so the
// answer is always exact.
type simplex struct {
	n, m   int
	x      []float64 // flow, n×m row-major; non-zero only on basic cells
	basic  []bool    // n×m
	adj    [][]int32 // tree neighbours of each node: rows 0..n−1, columns n..n+m−1
	u      []float64 // potentials: rows then columns (u[n+j] is v_j)
	parent []int32
	depth  []int32
	queue  []int32
	rowOK  []bool // least-cost start: lines not yet crossed out
	colOK  []bool
	path   []int32 // cycle buffers
	path2  []int32
	rowMin []int32 // least-cost start: each open row's cheapest open column
	next   int     // block pricing: where the next search starts
}

func (s *simplex) init(n, m int) {
	s.n, s.m, s.next = n, m, 0
	s.x = grow(s.x, n*m)
	clear(s.x)
	s.basic = growBool(s.basic, n*m)
	clear(s.basic)
	if cap(s.adj) < n+m {
		s.adj = make([][]int32, n+m)
	}
	s.adj = s.adj[:n+m]
	for i := range s.adj {
		s.adj[i] = s.adj[i][:0]
	}
	s.u = grow(s.u, n+m)
	s.parent = growInt(s.parent, n+m)
	s.depth = growInt(s.depth, n+m)
	s.queue = growInt(s.queue, n+m)
	s.rowOK = growBool(s.rowOK, n)
	s.colOK = growBool(s.colOK, m)
}

func (s *simplex) link(i, j int) {
	s.basic[i*s.m+j] = true
	s.adj[i] = append(s.adj[i], int32(s.n+j))
	s.adj[s.n+j] = append(s.adj[s.n+j], int32(i))
}

func (s *simplex) unlink(i, j int) {
	s.basic[i*s.m+j] = false
	s.adj[i] = remove(s.adj[i], int32(s.n+j))
	s.adj[s.n+j] = remove(s.adj[s.n+j], int32(i))
}

func remove(l []int32, v int32) []int32 {
	for k, w := range l {
		if w == v {
			l[k] = l[len(l)-1]
			return l[:len(l)-1]
		}
	}
	return l
}

// start builds the least-cost initial basis: repeatedly ship as much as
// possible along the cheapest cell whose row and column are both still
// open, then close exactly one of them (both at the very end), which gives
// n+m−1 basic cells forming a spanning tree. sup and dem are consumed.
func (s *simplex) start(sup, dem, cost []float64) {
	n, m := s.n, s.m
	for i := range s.rowOK {
		s.rowOK[i] = true
	}
	for j := range s.colOK {
		s.colOK[j] = true
	}
	// Each open row's cheapest open column, refreshed only when that
	// column closes: O(n·m) in all instead of a full scan per step.
	s.rowMin = growInt(s.rowMin, n)
	rowBest := func(i int) {
		r := cost[i*m : i*m+m]
		bj, bc := -1, math.Inf(1)
		for j, c := range r {
			if s.colOK[j] && c < bc {
				bj, bc = j, c
			}
		}
		s.rowMin[i] = int32(bj)
	}
	for i := 0; i < n; i++ {
		rowBest(i)
	}
	rows, cols := n, m
	for rows > 0 && cols > 0 {
		bi, bj, bc := -1, -1, math.Inf(1)
		for i := 0; i < n; i++ {
			if !s.rowOK[i] {
				continue
			}
			if j := int(s.rowMin[i]); j >= 0 && cost[i*m+j] < bc {
				bi, bj, bc = i, j, cost[i*m+j]
			}
		}
		f := min(sup[bi], dem[bj])
		s.x[bi*m+bj] = f
		s.link(bi, bj)
		sup[bi] -= f
		dem[bj] -= f
		switch {
		case rows == 1 && cols == 1:
			rows, cols = 0, 0
		case (sup[bi] == 0 || cols == 1) && rows > 1:
			s.rowOK[bi] = false
			rows--
		default:
			s.colOK[bj] = false
			cols--
			for i := 0; i < n; i++ {
				if s.rowOK[i] && int(s.rowMin[i]) == bj {
					rowBest(i)
				}
			}
		}
	}
}

// potentials sets u on the tree (u of row 0 is 0) and the parent and depth
// of every node in the tree rooted at row 0.
func (s *simplex) potentials(cost []float64) {
	n, m := s.n, s.m
	s.u[0], s.parent[0], s.depth[0] = 0, -1, 0
	q := s.queue[:1]
	q[0] = 0
	for h := 0; h < len(q); h++ {
		a := q[h]
		for _, b := range s.adj[a] {
			if b == s.parent[a] {
				continue
			}
			if int(a) < n {
				s.u[b] = cost[int(a)*m+int(b)-n] - s.u[a]
			} else {
				s.u[b] = cost[int(b)*m+int(a)-n] - s.u[a]
			}
			s.parent[b], s.depth[b] = a, s.depth[a]+1
			q = append(q, b)
		}
	}
}

// cell returns the flat index of the cell joining tree nodes a and b.
func (s *simplex) cell(a, b int32) int {
	if int(a) < s.n {
		return int(a)*s.m + int(b) - s.n
	}
	return int(b)*s.m + int(a) - s.n
}

// solve runs the simplex from the least-cost start and returns the optimal
// cost, or ok = false when the pivot budget ran out.
func (s *simplex) solve(sup, dem, cost []float64) (total float64, ok bool) {
	n, m := s.n, s.m
	s.start(sup, dem, cost)
	maxC := 0.0
	for _, c := range cost {
		maxC = math.Max(maxC, math.Abs(c))
	}
	eps := 1e-12 * (1 + maxC)
	budget := 50*(n+m) + 200
	for it := 0; ; it++ {
		if it == budget {
			return 0, false
		}
		s.potentials(cost)
		// Block search pricing (as in LEMON's network simplex): scan the
		// cells in blocks of about √(n·m) from where the last search
		// stopped, and enter the most negative reduced cost of the first
		// block that has one.
		bp, bq, br := -1, -1, -eps
		nm := n * m
		block := max(int(math.Sqrt(float64(nm))), 8)
		v := s.u[n : n+m]
		for seen, k := 0, s.next; seen < nm; {
			end := min(seen+block, nm)
			for ; seen < end; seen++ {
				if k == nm {
					k = 0
				}
				i, j := k/m, k%m
				if d := cost[k] - s.u[i] - v[j]; d < br && !s.basic[k] {
					bp, bq, br = i, j, d
				}
				k++
			}
			if bp >= 0 {
				s.next = k
				break
			}
		}
		if bp < 0 {
			break
		}
		// The cycle: the tree path from column q up to the common
		// ancestor and down to row p, closed by the entering cell (p, q).
		a, b := int32(n+bq), int32(bp)
		up, down := append(s.path[:0], a), append(s.path2[:0], b)
		for s.depth[a] > s.depth[b] {
			a = s.parent[a]
			up = append(up, a)
		}
		for s.depth[b] > s.depth[a] {
			b = s.parent[b]
			down = append(down, b)
		}
		for a != b {
			a, b = s.parent[a], s.parent[b]
			up, down = append(up, a), append(down, b)
		}
		cyc := up
		for k := len(down) - 2; k >= 0; k-- {
			cyc = append(cyc, down[k])
		}
		s.path, s.path2 = cyc, down
		// Edges along q → … → p alternate −, +, −, … (odd count, ends −).
		theta, leave := math.Inf(1), -1
		for k := 0; k+1 < len(cyc); k += 2 {
			c := s.cell(cyc[k], cyc[k+1])
			if s.x[c] < theta {
				theta, leave = s.x[c], k
			}
		}
		for k := 0; k+1 < len(cyc); k++ {
			c := s.cell(cyc[k], cyc[k+1])
			if k%2 == 0 {
				s.x[c] -= theta
			} else {
				s.x[c] += theta
			}
		}
		lc := s.cell(cyc[leave], cyc[leave+1])
		s.x[lc] = 0
		s.unlink(lc/m, lc%m)
		s.x[bp*m+bq] = theta
		s.link(bp, bq)
	}
	for k, f := range s.x {
		if f != 0 {
			total += f * cost[k]
		}
	}
	return total, true
}
