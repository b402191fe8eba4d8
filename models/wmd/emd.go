package wmd

import (
	"errors"
	"fmt"
	"math"
)

// Solver computes exact earth mover's distances: it solves the
// transportation problem
//
//	min Σ_ij T_ij·c_ij  subject to  Σ_j T_ij = a_i,  Σ_i T_ij = b_j,  T ≥ 0
//
// by the transportation simplex (see simplex). Should degenerate pivots
// exhaust the simplex's budget, it falls back to successive shortest paths
// on the bipartite residual network, with Dijkstra on reduced costs
// (Johnson potentials) over dense arrays. Every augmentation keeps the
// flow optimal for the mass moved so far, so that algorithm is exact too;
// it ends when all supply is moved. The arcs from supplies to demands are
// uncapacitated, so a shortest path is blocked only by the supply at its
// start, the demand at its end, or the flow on a reversed arc; its start
// takes the column minima of c as sink potentials and ships along each
// column's cheapest arc, which usually moves most of the mass before the
// first Dijkstra.
//
// A Solver reuses its buffers between calls and allocates nothing once
// they have grown; it is not safe for concurrent use (give each goroutine
// its own).
type Solver struct {
	n, m         int
	x            []float64 // flow, n×m row-major
	ps, pt       []float64 // potentials of sources and sinks
	distS, distT []float64
	keyS, keyT   []float64 // distance while unsettled, +Inf once settled: a branch-free min scan
	doneS, doneT []bool
	predS, predT []int32
	exc, def     []float64
	order        []int32 // sinks with demand, in the order a phase settled them

	// The transportation simplex runs first; successive shortest paths is
	// the fallback when it runs out of pivots (degenerate cycling).
	sx       simplex
	sup, dem []float64 // the simplex's copies of the masses (it consumes them)
	mb       []float64 // b scaled to a's mass
	cost     []float64 // Space.WMD's cost matrix
	sspOnly  bool      // tests: skip the simplex
	byPivots bool      // the last Solve's plan is in sx.x
}

// ErrMass is returned when the two histograms do not carry the same mass.
var ErrMass = errors.New("wmd: histograms carry different mass")

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

func growBool(s []bool, n int) []bool {
	if cap(s) < n {
		return make([]bool, n)
	}
	return s[:n]
}

func growInt(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// Solve returns the optimal transport cost between histograms a (n) and b
// (m) under cost, an n×m row-major matrix. The masses must agree to within
// 1e-6 relative (b is then rescaled to a's mass, as POT's ot.emd does);
// weights must be non-negative and finite, and so must their sums; costs
// finite.
func (s *Solver) Solve(a, b, cost []float64) (float64, error) {
	d, _, err := s.SolveCutoff(a, b, cost, math.Inf(1))
	return d, err
}

// SolveCutoff is Solve for search: it may stop early once it has proved
// that the optimum exceeds cutoff, and then returns a lower bound of the
// optimum that exceeds cutoff, and exact = false. Otherwise it returns the
// optimum, bit for bit what Solve returns, and exact = true. With cutoff
// = +Inf it is Solve.
func (s *Solver) SolveCutoff(a, b, cost []float64, cutoff float64) (d float64, exact bool, err error) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return 0, false, errors.New("wmd: empty histogram")
	}
	if len(cost) != n*m {
		return 0, false, fmt.Errorf("wmd: cost matrix has %d entries, want %d×%d", len(cost), n, m)
	}
	sa, sb, err := masses(a, b)
	if err != nil {
		return 0, false, err
	}
	maxC := maxAbs(cost)
	if !(maxC <= math.MaxFloat64) { // NaN or ±Inf somewhere
		return 0, false, errors.New("wmd: cost matrix has a non-finite entry")
	}
	s.mb = grow(s.mb, m)
	scale := sa / sb
	for j, w := range b {
		s.mb[j] = w * scale
	}
	if !s.sspOnly {
		s.sx.init(n, m)
		s.sup = append(s.sup[:0], a...)
		s.dem = append(s.dem[:0], s.mb...)
		total, how := s.sx.solve(a, s.mb, s.sup, s.dem, cost, 1e-12*(1+maxC), cutoff)
		switch how {
		case simplexOptimal:
			s.byPivots = true
			return total, true, nil
		case simplexCut:
			s.byPivots = true
			return total, false, nil
		}
	}
	s.byPivots = false
	s.init(n, m)
	copy(s.exc, a)
	copy(s.def, s.mb)
	return s.ssp(sa, cost), true, nil
}

// ssp solves the problem set up in exc and def by successive shortest
// paths.
func (s *Solver) ssp(sa float64, cost []float64) float64 {
	n, m := s.n, s.m
	tol := 1e-14 * sa
	remaining := sa

	// Sink potentials = column minima; ship along each column's cheapest arc.
	for j := 0; j < m; j++ {
		bi, bc := 0, cost[j]
		for i := 1; i < n; i++ {
			if c := cost[i*m+j]; c < bc {
				bi, bc = i, c
			}
		}
		s.pt[j] = bc
		if f := min(s.exc[bi], s.def[j]); f > 0 {
			s.x[bi*m+j] += f
			s.exc[bi] -= f
			s.def[j] -= f
			remaining -= f
		}
	}
	for remaining > tol {
		moved, ok := s.phase(cost, tol)
		if !ok {
			break // the mass left is rounding dust on one side only
		}
		remaining -= moved
	}
	var total float64
	for k, f := range s.x {
		if f != 0 {
			total += f * cost[k]
		}
	}
	return total
}

// maxAbs returns max_k |c_k|: NaN if some c_k is NaN (the max builtin
// propagates it), +Inf if some is infinite. Four running maxima, as one
// would be a chain of dependent instructions.
func maxAbs(c []float64) float64 {
	var m0, m1, m2, m3 float64
	k := 0
	for ; k+4 <= len(c); k += 4 {
		m0 = max(m0, math.Abs(c[k]))
		m1 = max(m1, math.Abs(c[k+1]))
		m2 = max(m2, math.Abs(c[k+2]))
		m3 = max(m3, math.Abs(c[k+3]))
	}
	for ; k < len(c); k++ {
		m0 = max(m0, math.Abs(c[k]))
	}
	return max(m0, m1, m2, m3)
}

func masses(a, b []float64) (sa, sb float64, err error) {
	for _, w := range a {
		if !(w >= 0) || math.IsInf(w, 0) {
			return 0, 0, fmt.Errorf("wmd: weight %v is not a finite non-negative number", w)
		}
		sa += w
	}
	for _, w := range b {
		if !(w >= 0) || math.IsInf(w, 0) {
			return 0, 0, fmt.Errorf("wmd: weight %v is not a finite non-negative number", w)
		}
		sb += w
	}
	if sa <= 0 || sb <= 0 {
		return 0, 0, errors.New("wmd: a histogram has zero mass")
	}
	if math.IsInf(sa, 1) || math.IsInf(sb, 1) {
		return 0, 0, errors.New("wmd: a histogram's mass overflows")
	}
	if math.Abs(sa-sb) > 1e-6*max(sa, sb) {
		return 0, 0, fmt.Errorf("%w: %g vs %g", ErrMass, sa, sb)
	}
	return sa, sb, nil
}

func (s *Solver) init(n, m int) {
	s.n, s.m = n, m
	s.x = grow(s.x, n*m)
	clear(s.x)
	s.ps, s.pt = grow(s.ps, n), grow(s.pt, m)
	clear(s.ps)
	s.distS, s.distT = grow(s.distS, n), grow(s.distT, m)
	s.keyS, s.keyT = grow(s.keyS, n), grow(s.keyT, m)
	s.doneS, s.doneT = growBool(s.doneS, n), growBool(s.doneT, m)
	s.predS, s.predT = growInt(s.predS, n), growInt(s.predT, m)
	s.exc, s.def = grow(s.exc, n), grow(s.def, m)
}

// phase runs Dijkstra on reduced costs from every source with excess until
// every sink with unmet demand is settled, shifts the potentials so that
// each shortest path found has zero reduced cost, and then pushes flow
// along the shortest-path tree to each of those sinks in turn (primal-dual:
// many augmentations per Dijkstra; any augmentation along zero-reduced-cost
// arcs keeps the flow optimal). It returns the mass moved, and false when
// no source has excess or no sink with demand is reachable.
func (s *Solver) phase(cost []float64, tol float64) (float64, bool) {
	n, m := s.n, s.m
	inf := math.Inf(1)
	open := 0 // unsettled sinks with unmet demand
	for j := 0; j < m; j++ {
		s.doneT[j] = false
		s.predT[j] = -1
		s.distT[j] = inf
		s.keyT[j] = inf
		if s.def[j] > tol {
			open++
		}
	}
	any := false
	for i := 0; i < n; i++ {
		s.doneS[i] = false
		s.predS[i] = -1
		if s.exc[i] > tol {
			s.distS[i] = 0
			any = true
		} else {
			s.distS[i] = inf
		}
		s.keyS[i] = s.distS[i]
	}
	if !any || open == 0 {
		return 0, false
	}
	s.order = s.order[:0]
	var D float64
	for open > 0 {
		best, bi, sink := inf, -1, false
		for i, d := range s.keyS {
			if d < best {
				best, bi = d, i
			}
		}
		for j, d := range s.keyT {
			if d < best {
				best, bi, sink = d, j, true
			}
		}
		if bi < 0 {
			break // the remaining demand is unreachable (rounding dust)
		}
		D = best
		if sink {
			j := bi
			s.doneT[j] = true
			s.keyT[j] = inf
			if s.def[j] > tol {
				s.order = append(s.order, int32(j))
				open--
			}
			// Reverse arcs j→i exist where flow i→j can be cancelled.
			base := best + s.pt[j]
			for i := 0; i < n; i++ {
				if s.x[i*m+j] > 0 && !s.doneS[i] {
					nd := max(base-cost[i*m+j]-s.ps[i], best)
					if nd < s.distS[i] {
						s.distS[i], s.keyS[i] = nd, nd
						s.predS[i] = int32(j)
					}
				}
			}
			continue
		}
		i := bi
		s.doneS[i] = true
		s.keyS[i] = inf
		base := best + s.ps[i]
		row := cost[i*m : i*m+m]
		for j, c := range row {
			if !s.doneT[j] {
				if nd := base + c - s.pt[j]; nd < s.distT[j] {
					s.distT[j], s.keyT[j] = nd, nd
					s.predT[j] = int32(i)
				}
			}
		}
	}
	if len(s.order) == 0 {
		return 0, false
	}
	// π(v) += min(d(v), D) − D: only settled nodes move.
	for i := 0; i < n; i++ {
		if s.doneS[i] {
			s.ps[i] += s.distS[i] - D
		}
	}
	for j := 0; j < m; j++ {
		if s.doneT[j] {
			s.pt[j] += s.distT[j] - D
		}
	}
	var moved float64
	for _, t := range s.order {
		moved += s.augment(int(t))
	}
	return moved, true
}

// augment pushes as much flow as the tree path ending at sink t allows
// (possibly none, when an earlier augmentation of the same phase used up
// a reverse arc or the source's excess) and returns the amount.
func (s *Solver) augment(t int) float64 {
	m := s.m
	delta := s.def[t]
	for j := t; delta > 0; {
		i := int(s.predT[j])
		pj := int(s.predS[i])
		if pj < 0 {
			delta = min(delta, s.exc[i])
			break
		}
		delta = min(delta, s.x[i*m+pj])
		j = pj
	}
	if delta <= 0 {
		return 0
	}
	for j := t; ; {
		i := int(s.predT[j])
		s.x[i*m+j] += delta
		pj := int(s.predS[i])
		if pj < 0 {
			s.exc[i] -= delta
			break
		}
		s.x[i*m+pj] -= delta
		j = pj
	}
	s.def[t] -= delta
	return delta
}

// Flow returns a copy of the optimal transport plan of the last Solve,
// n×m row-major.
func (s *Solver) Flow() []float64 {
	if s.byPivots {
		return append([]float64(nil), s.sx.x...)
	}
	return append([]float64(nil), s.x...)
}

// EMD solves one transportation problem with a fresh Solver.
func EMD(a, b, cost []float64) (float64, error) {
	var s Solver
	return s.Solve(a, b, cost)
}
