package wmd

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// lpEMD solves the same transportation problem as a general LP with
// gonum's simplex: the brute-force reference.
func lpEMD(t testing.TB, a, b, cost []float64) float64 {
	a, b, cost = dropEmpty(a, b, cost)
	n, m := len(a), len(b)
	// Row sums for every source, column sums for all sinks but the last
	// (that constraint is implied by the others and would make A singular).
	rows := n + m - 1
	A := mat.NewDense(rows, n*m, nil)
	rhs := make([]float64, rows)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			A.Set(i, i*m+j, 1)
			if j < m-1 {
				A.Set(n+j, i*m+j, 1)
			}
		}
		rhs[i] = a[i]
	}
	copy(rhs[n:], b[:m-1])
	f, _, err := lp.Simplex(cost, A, rhs, 1e-12, nil)
	if err != nil {
		t.Fatalf("lp: %v", err)
	}
	return f
}

// dropEmpty removes zero-weight bins, which carry no flow and would make
// the LP's constraint matrix rank-deficient.
func dropEmpty(a, b, cost []float64) ([]float64, []float64, []float64) {
	m := len(b)
	var ka, kb []int
	for i, w := range a {
		if w > 0 {
			ka = append(ka, i)
		}
	}
	for j, w := range b {
		if w > 0 {
			kb = append(kb, j)
		}
	}
	var na, nb, nc []float64
	for _, i := range ka {
		na = append(na, a[i])
		for _, j := range kb {
			nc = append(nc, cost[i*m+j])
		}
	}
	for _, j := range kb {
		nb = append(nb, b[j])
	}
	return na, nb, nc
}

func randomHist(r *rand.Rand, n int, zeros bool) []float64 {
	h := make([]float64, n)
	var s float64
	for i := range h {
		if zeros && r.IntN(4) == 0 {
			continue
		}
		h[i] = r.Float64()
		s += h[i]
	}
	if s == 0 {
		h[0], s = 1, 1
	}
	for i := range h {
		h[i] /= s
	}
	return h
}

func TestSolveMatchesLP(t *testing.T) {
	for _, sspOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "simplex", true: "ssp"}[sspOnly], func(t *testing.T) {
			testSolveMatchesLP(t, &Solver{sspOnly: sspOnly})
		})
	}
}

func testSolveMatchesLP(t *testing.T, s *Solver) {
	r := rand.New(rand.NewPCG(1, 2))
	kinds := []struct {
		name  string
		cost  func() float64
		zeros bool
		unif  bool
	}{
		{"continuous", func() float64 { return r.Float64() * 3 }, false, false},
		{"with zero weights", func() float64 { return r.Float64() }, true, false},
		{"integer ties, uniform weights", func() float64 { return float64(r.IntN(3)) }, false, true},
		{"negative costs", func() float64 { return r.Float64() - 0.5 }, false, false},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			for trial := 0; trial < 60; trial++ {
				n, m := 1+r.IntN(6), 1+r.IntN(6)
				a, b := randomHist(r, n, k.zeros), randomHist(r, m, k.zeros)
				if k.unif {
					for i := range a {
						a[i] = 1 / float64(n)
					}
					for j := range b {
						b[j] = 1 / float64(m)
					}
				}
				cost := make([]float64, n*m)
				for i := range cost {
					cost[i] = k.cost()
				}
				got, err := s.Solve(a, b, cost)
				if err != nil {
					t.Fatal(err)
				}
				want := lpEMD(t, a, b, cost)
				if math.Abs(got-want) > 1e-9 {
					t.Fatalf("trial %d (%d×%d): EMD %.15g, LP %.15g", trial, n, m, got, want)
				}
				checkPlan(t, s.Flow(), a, b)
			}
		})
	}
}

// checkPlan verifies that a plan is feasible: non-negative with the
// histograms as marginals.
func checkPlan(t *testing.T, x, a, b []float64) {
	t.Helper()
	n, m := len(a), len(b)
	for i := 0; i < n; i++ {
		var s float64
		for j := 0; j < m; j++ {
			if x[i*m+j] < 0 {
				t.Fatalf("negative flow %g", x[i*m+j])
			}
			s += x[i*m+j]
		}
		if math.Abs(s-a[i]) > 1e-12 {
			t.Fatalf("row %d ships %g, supply %g", i, s, a[i])
		}
	}
	for j := 0; j < m; j++ {
		var s float64
		for i := 0; i < n; i++ {
			s += x[i*m+j]
		}
		if math.Abs(s-b[j]) > 1e-12 {
			t.Fatalf("column %d receives %g, demand %g", j, s, b[j])
		}
	}
}

func TestSolveKnownValues(t *testing.T) {
	tests := []struct {
		a, b, cost []float64
		want       float64
	}{
		{[]float64{1}, []float64{1}, []float64{2.5}, 2.5},
		{[]float64{0.5, 0.5}, []float64{0.5, 0.5}, []float64{0, 1, 1, 0}, 0},
		{[]float64{0.5, 0.5}, []float64{0.5, 0.5}, []float64{1, 0, 0, 1}, 0},
		// Everything must move from the first bin to the second.
		{[]float64{1, 0}, []float64{0, 1}, []float64{0, 3, 3, 0}, 3},
		// b carries twice a's mass... within tolerance it is rescaled.
		{[]float64{1}, []float64{0.5, 0.5 + 1e-9}, []float64{1, 2}, 1.5},
	}
	for i, tc := range tests {
		got, err := EMD(tc.a, tc.b, tc.cost)
		if err != nil || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("case %d: EMD = %v, %v; want %v", i, got, err, tc.want)
		}
	}
}

func TestSolveRejectsBadInput(t *testing.T) {
	tests := []struct {
		a, b, cost []float64
		want       string
	}{
		{nil, []float64{1}, nil, "empty"},
		{[]float64{1}, []float64{1}, []float64{1, 2}, "cost matrix"},
		{[]float64{1}, []float64{0.5}, []float64{1}, "different mass"},
		{[]float64{-1, 2}, []float64{1}, []float64{1, 1}, "non-negative"},
		{[]float64{math.NaN()}, []float64{1}, []float64{1}, "non-negative"},
		{[]float64{0}, []float64{0}, []float64{1}, "zero mass"},
		{[]float64{1}, []float64{1}, []float64{math.Inf(1)}, "non-finite"},
		{[]float64{0.5, 0.5}, []float64{1}, []float64{1, math.NaN()}, "non-finite"},
		{[]float64{0.2, 0.2, 0.2, 0.2, 0.2}, []float64{1}, []float64{1, 2, 3, 4, math.Inf(-1)}, "non-finite"},
		// Every weight is finite but their sum overflows: b would be
		// rescaled by Inf/Inf.
		{[]float64{1e308, 1e308}, []float64{1e308, 1e308}, []float64{1, 2, 3, 4}, "overflows"},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, err := EMD(tc.a, tc.b, tc.cost)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := EMD([]float64{1}, []float64{2}, []float64{0}); !errors.Is(err, ErrMass) {
		t.Errorf("mass mismatch not ErrMass: %v", err)
	}
}

// TestSimplexMatchesSSP compares the two exact solvers on larger random
// problems than the LP can check quickly, including degenerate ones (equal
// uniform weights and integer costs with many ties), and checks that the
// simplex finished within its pivot budget rather than falling back.
func TestSimplexMatchesSSP(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	simplex, ssp := Solver{}, Solver{sspOnly: true}
	for trial := 0; trial < 200; trial++ {
		n, m := 1+r.IntN(40), 1+r.IntN(40)
		degenerate := trial%2 == 1
		a, b := randomHist(r, n, trial%5 == 0), randomHist(r, m, trial%7 == 0)
		cost := make([]float64, n*m)
		for i := range cost {
			if degenerate {
				cost[i] = float64(r.IntN(4))
			} else {
				cost[i] = r.Float64()
			}
		}
		if degenerate {
			for i := range a {
				a[i] = 1 / float64(n)
			}
			for j := range b {
				b[j] = 1 / float64(m)
			}
		}
		got, err := simplex.Solve(a, b, cost)
		if err != nil {
			t.Fatal(err)
		}
		if !simplex.byPivots {
			t.Fatalf("trial %d (%d×%d): the simplex ran out of pivots", trial, n, m)
		}
		checkPlan(t, simplex.Flow(), a, b)
		checkTree(t, &simplex.sx, cost)
		want, err := ssp.Solve(a, b, cost)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
			t.Fatalf("trial %d (%d×%d, degenerate %v): simplex %.15g, ssp %.15g", trial, n, m, degenerate, got, want)
		}
	}
}

// checkTree checks the simplex's final basis tree: its preorder and
// positions, every subtree a block of the preorder holding exactly its
// descendants, sizes, potentials (each node's from its parent's, bit for
// bit, the root's 0) and flow only on tree cells.
func checkTree(t *testing.T, s *simplex, cost []float64) {
	t.Helper()
	n, m := s.n, s.m
	N := n + m
	if s.order[0] != 0 || s.parent[0] != -1 || s.pi[0] != 0 || s.size[0] != int32(N) {
		t.Fatalf("root: order[0] %d parent %d potential %g size %d", s.order[0], s.parent[0], s.pi[0], s.size[0])
	}
	seen := make([]bool, N)
	for k, x := range s.order[:N] {
		if seen[x] || s.pos[x] != int32(k) {
			t.Fatalf("preorder %v, positions %v", s.order[:N], s.pos[:N])
		}
		seen[x] = true
	}
	kids := make([]int32, N)
	for x := int32(1); x < int32(N); x++ {
		p := s.parent[x]
		if (x < int32(n)) == (p < int32(n)) {
			t.Fatalf("node %d's parent %d is on the same side", x, p)
		}
		if !(s.pos[p] < s.pos[x] && s.pos[x]+s.size[x] <= s.pos[p]+s.size[p]) {
			t.Fatalf("node %d's block is not inside its parent %d's", x, p)
		}
		kids[p] += s.size[x]
		if want := s.edgeCost(x, p, int32(n), m, cost) - s.pi[p]; s.pi[x] != want {
			t.Fatalf("node %d: potential %g, want %g", x, s.pi[x], want)
		}
	}
	for x := range N {
		if s.size[x] != 1+kids[x] {
			t.Fatalf("node %d: size %d, children's %d", x, s.size[x], kids[x])
		}
	}
	for i := range n {
		for j := range m {
			J := int32(n + j)
			tree := s.parent[J] == int32(i) || s.parent[i] == J
			if f := s.x[i*m+j]; f != 0 && !tree {
				t.Fatalf("flow %g on cell (%d, %d) off the tree", f, i, j)
			}
		}
	}
}

func BenchmarkSolve(b *testing.B) {
	for _, n := range []int{10, 30, 100} {
		r := rand.New(rand.NewPCG(uint64(n), 9))
		x, y := randomHist(r, n, false), randomHist(r, n, false)
		cost := make([]float64, n*n)
		for i := range cost {
			cost[i] = r.Float64()
		}
		for _, sspOnly := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/n=%d", map[bool]string{false: "simplex", true: "ssp"}[sspOnly], n), func(b *testing.B) {
				s := Solver{sspOnly: sspOnly}
				for b.Loop() {
					if _, err := s.Solve(x, y, cost); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		if n <= 30 {
			b.Run(fmt.Sprintf("gonum-lp/n=%d", n), func(b *testing.B) {
				for b.Loop() {
					lpEMD(b, x, y, cost)
				}
			})
		}
	}
}
