package stages

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// TestRegularized checks f = (1 − α)(I − αS)⁻¹y on graphs solved by hand.
func TestRegularized(t *testing.T) {
	// The path a – b – c, edges of weight 1: degrees 1, 2, 1, S's
	// off-diagonal entries 1/√2. With y = (1, 0, 0), α = 1/2 and r =
	// α/√2: fc = r·fb, fb = r·fa/(1 − r²), fa = (1 − α)(1 − r²)/(1 − 2r²).
	r := 0.5 / math.Sqrt2
	fa := 0.5 * (1 - r*r) / (1 - 2*r*r)
	fb := r * fa / (1 - r*r)
	tests := []struct {
		name  string
		w     [][]float64
		y     []float64
		alpha float64
		want  []float64
	}{
		// Two nodes: fa = 1/2 + fb/2, fb = −1/2 + fa/2.
		{"pair", [][]float64{{0, 1}, {1, 0}}, []float64{1, -1}, 0.5, []float64{1.0 / 3, -1.0 / 3}},
		// S is the same whatever the edge's weight.
		{"pair weighted", [][]float64{{0, 0.2}, {0.2, 0}}, []float64{1, -1}, 0.5, []float64{1.0 / 3, -1.0 / 3}},
		{"no edges", [][]float64{{0, 0}, {0, 0}}, []float64{2, -2}, 0.5, []float64{1, -1}},
		{"alpha 0", [][]float64{{0, 1}, {1, 0}}, []float64{2, -2}, 0, []float64{2, -2}},
		{"path", [][]float64{{0, 1, 0}, {1, 0, 1}, {0, 1, 0}}, []float64{1, 0, 0}, 0.5, []float64{fa, fb, r * fb}},
		{"empty", nil, nil, 0.5, []float64{}},
	}
	for _, tc := range tests {
		got := regularized(graphOf(tc.w), tc.y, tc.alpha)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %d scores, want %d", tc.name, len(got), len(tc.want))
		}
		for i := range tc.want {
			if math.Abs(got[i]-tc.want[i]) > 1e-9 {
				t.Errorf("%s: f[%d] = %v, want %v", tc.name, i, got[i], tc.want[i])
			}
		}
	}
	// Near α = 1 the scores flatten towards S's leading eigenvector,
	// √degree, (1, √2, 1) on the path.
	got := regularized(graphOf([][]float64{{0, 1, 0}, {1, 0, 1}, {0, 1, 0}}), []float64{1, 0, 0}, 0.999)
	if got[0]/got[2] > 1.1 || got[1] < got[0] {
		t.Errorf("alpha 0.999: %v, want scores near (1, √2, 1)·c", got)
	}
}

// graphOf returns the graph of a dense weight matrix (0: no edge).
func graphOf(w [][]float64) [][]neighbour {
	adj := make([][]neighbour, len(w))
	for i, row := range w {
		for j, v := range row {
			if v != 0 {
				adj[i] = append(adj[i], neighbour{j, v})
			}
		}
	}
	return adj
}

// denseOf returns a graph's dense weight matrix.
func denseOf(adj [][]neighbour) [][]float64 {
	w := make([][]float64, len(adj))
	for i, edges := range adj {
		w[i] = make([]float64, len(adj))
		for _, e := range edges {
			w[i][e.j] = e.w
		}
	}
	return w
}

// rowsOf serves a similarity matrix's rows as knnGraph reads them.
func rowsOf(sim [][]float64) func(i int, out []float64) {
	return func(i int, out []float64) { copy(out, sim[i]) }
}

// TestKNNGraph checks the symmetric k-nearest-neighbour graph.
func TestKNNGraph(t *testing.T) {
	sim := [][]float64{
		{0, 0.9, 0.1, 0},
		{0.9, 0, 0.5, -0.2},
		{0.1, 0.5, 0, 0},
		{0, -0.2, 0, 0},
	}
	tests := []struct {
		k    int
		want [][]float64
	}{
		// 0 → 1, 1 → 0, 2 → 1; 3 has no positive similarity.
		{1, [][]float64{{0, 0.9, 0, 0}, {0.9, 0, 0.5, 0}, {0, 0.5, 0, 0}, {0, 0, 0, 0}}},
		// Every positive similarity.
		{5, [][]float64{{0, 0.9, 0.1, 0}, {0.9, 0, 0.5, 0}, {0.1, 0.5, 0, 0}, {0, 0, 0, 0}}},
	}
	for _, tc := range tests {
		got := denseOf(knnGraph(len(sim), tc.k, rowsOf(sim)))
		for i := range tc.want {
			for j := range tc.want[i] {
				if got[i][j] != tc.want[i][j] {
					t.Errorf("k %d: W[%d][%d] = %v, want %v", tc.k, i, j, got[i][j], tc.want[i][j])
				}
			}
		}
	}
	// Ties go to the lower index.
	ties := [][]float64{{0, 0.5, 0.5}, {0.5, 0, 0}, {0.5, 0, 0}}
	got := denseOf(knnGraph(len(ties), 1, rowsOf(ties)))
	if got[0][1] != 0.5 || got[0][2] != 0.5 || got[1][2] != 0 {
		t.Errorf("ties: %v", got) // 0 chose 1; 2 chose 0
	}
	// Rows that differ by rounding give one edge, weighing the larger.
	skew := [][]float64{{0, 0.3}, {0.30000000000000004, 0}}
	got = denseOf(knnGraph(2, 1, rowsOf(skew)))
	if got[0][1] != skew[1][0] || got[1][0] != skew[1][0] {
		t.Errorf("rounded rows: %v", got)
	}
}

// TestStandardize checks z-scores and the degenerate windows.
func TestStandardize(t *testing.T) {
	z := math.Sqrt(1.5)
	tests := []struct {
		y, want []float64
	}{
		{[]float64{1, 2, 3}, []float64{-z, 0, z}},
		{[]float64{5, 5}, []float64{0, 0}},
		{[]float64{1, math.NaN()}, []float64{0, 0}},
		{[]float64{1, math.Inf(1)}, []float64{0, 0}},
		{nil, []float64{}},
	}
	for _, tc := range tests {
		got := standardize(tc.y)
		if len(got) != len(tc.want) {
			t.Fatalf("standardize(%v): %v", tc.y, got)
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("standardize(%v) = %v, want %v", tc.y, got, tc.want)
				break
			}
		}
	}
}

// TestRegularizeScore checks a window end to end: d1 and d2 hold the
// same words (cosine 1), d3 none of theirs. Scores 3, 1, 2 standardise to
// (u, −u, 0), u = √1.5; the pair regularizes to (u/3, −u/3), d3 keeps 0.
func TestRegularizeScore(t *testing.T) {
	cands := []rerank.Candidate{
		{Doc: dataset.Doc{ID: "d1", Text: "a b"}, Score: 3},
		{Doc: dataset.Doc{ID: "d2", Text: "b a"}, Score: 1},
		{Doc: dataset.Doc{ID: "d3", Text: "c"}, Score: 2},
	}
	s := &Regularize{Stats: mapStats{n: 10, df: map[string]uint64{"a": 2, "b": 5, "c": 1}}, Analyze: strings.Fields, K: 10, Alpha: 0.5}
	got, err := s.Score(context.Background(), rerank.Query{Text: "a"}, cands)
	if err != nil {
		t.Fatal(err)
	}
	u := math.Sqrt(1.5)
	want := []float64{u / 3, -u / 3, 0}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Errorf("%s: %v, want %v", cands[i].ID, got[i], want[i])
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Score(ctx, rerank.Query{Text: "a"}, cands); err == nil {
		t.Error("a cancelled context scored")
	}
}

// TestRegularizeOptions checks the factory's defaults and that it refuses
// settings outside their ranges, naming the option.
func TestRegularizeOptions(t *testing.T) {
	env := rerank.Env{Stats: flatStats{}}
	st, err := rerank.NewStage(rerank.StageSpec{Type: "regularize"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if r := st.(*Regularize); r.K != 10 || r.Alpha != 0.5 || r.Name() != "regularize" {
		t.Errorf("defaults: %+v", r)
	}
	refusesOptions(t, "regularize", env, []optionCase{
		{map[string]any{"k": 0}, "option k"},
		{map[string]any{"alpha": 1}, "option alpha"},
		{map[string]any{"alpha": -0.1}, "option alpha"},
		{map[string]any{"alpha": math.NaN()}, "option alpha"},
		{map[string]any{"mu": 1}, "unknown option mu"},
	})
}

// TestAutocorrelation checks the correlation of scores with their
// neighbours' means on graphs worked by hand.
func TestAutocorrelation(t *testing.T) {
	pairs := [][]float64{{0, 1, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, 1}, {0, 0, 1, 0}}
	tests := []struct {
		name string
		w    [][]float64
		y    []float64
		want float64
	}{
		{"alike pairs", pairs, []float64{1, 1, -1, -1}, 1},
		{"opposed pairs", pairs, []float64{1, -1, 1, -1}, -1},
		// Every node's neighbours average 0: nothing to correlate with.
		{"flat neighbours", [][]float64{{0, 1, 0}, {1, 0, 1}, {0, 1, 0}}, []float64{1, 0, -1}, 0},
		{"no edges", [][]float64{{0, 0}, {0, 0}}, []float64{1, -1}, 0},
		// The isolated node does not count: the pair alone is opposed.
		{"isolated node", [][]float64{{0, 1, 0}, {1, 0, 0}, {0, 0, 0}}, []float64{1, -1, 5}, -1},
		{"empty", nil, nil, 0},
	}
	for _, tc := range tests {
		if got := autocorrelation(graphOf(tc.w), tc.y); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
