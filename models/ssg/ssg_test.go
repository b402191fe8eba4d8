package ssg

import (
	"context"
	"errors"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/models/ssg/ssgtest"
	"github.com/semrank/semrank/models/topics"
	"github.com/semrank/semrank/models/wmd"
)

func TestBoxMin(t *testing.T) {
	tests := []struct{ a, b, want float64 }{
		{2, 1, 0.5},
		{1, 2, 1},
		{1, -1, 0},
		{-1, 0.1, 1}, // concave: f(1) = −1 − 0.2 < f(0) = 0
		{-1, -1, 0},  // concave: f(1) = 1 > f(0) = 0
	}
	for _, tc := range tests {
		if got := boxMin(tc.a, tc.b); got != tc.want {
			t.Errorf("boxMin(%g, %g) = %g, want %g", tc.a, tc.b, got, tc.want)
		}
	}
}

func fixture(t *testing.T) (*wmd.Space, *topics.Model) {
	v, tm := ssgtest.Fixture(t)
	return wmd.NewSpace(v), tm
}

func TestScoreRanksSameTopicFirst(t *testing.T) {
	space, tm := fixture(t)
	pool := []string{
		"beach desert camping", "bank loan salary", "sand beach", "loan account bank", "desert sand camping beach",
	}
	for _, dropout := range []float64{0, 0.5} {
		m, err := New(space, tm, Config{K: 3, Dropout: dropout})
		if err != nil {
			t.Fatal(err)
		}
		scores, err := m.Score(context.Background(), "bank salary loan", pool)
		if err != nil {
			t.Fatal(err)
		}
		worstNear := math.Min(scores[1], scores[3])
		bestFar := math.Max(scores[0], math.Max(scores[2], scores[4]))
		if worstNear <= bestFar {
			t.Errorf("dropout %g: scores %v: a bank document ranks below a beach document", dropout, scores)
		}
		again, _ := m.Score(context.Background(), "bank salary loan", pool)
		for i := range again {
			if again[i] != scores[i] {
				t.Fatalf("dropout %g: scores not reproducible", dropout)
			}
		}
	}
}

func TestCollectionNodes(t *testing.T) {
	space, tm := fixture(t)
	m, _ := New(space, tm, Config{K: 2})
	pool := []string{"beach desert camping", "bank loan salary"}
	m.SetCollection([]string{"loan account", "bank salary account", "sand dunes", "the of", "bank loan salary"})
	g, err := m.Build(context.Background(), "bank salary loan", pool)
	if err != nil {
		t.Fatal(err)
	}
	pooled, extra := 0, 0
	for _, nd := range g.nodes[1:] {
		if nd.pool >= 0 {
			pooled++
		} else {
			extra++
		}
	}
	// Both pool documents are forced in; the empty text and the copy of a
	// pool document never become nodes.
	if pooled != 2 || extra == 0 || extra > 3 {
		t.Errorf("%d pool nodes and %d collection nodes", pooled, extra)
	}
	scores := g.Scores(m.Config)
	if len(scores) != 2 || scores[1] <= scores[0] {
		t.Errorf("scores %v: the bank document should rank first", scores)
	}
}

func TestPropagateConverges(t *testing.T) {
	space, tm := fixture(t)
	m, _ := New(space, tm, Config{K: 4})
	g, err := m.Build(context.Background(), "bank loan", []string{"bank account", "sand desert", "loan salary"})
	if err != nil {
		t.Fatal(err)
	}
	lab, iters := g.Propagate(m.Config)
	if iters >= m.Config.MaxIter {
		t.Errorf("no convergence in %d iterations", iters)
	}
	if lab[0] != 1 {
		t.Errorf("query label %g, want the hard seed 1", lab[0])
	}
	for i, x := range lab {
		if x < 0 || x > 1 {
			t.Errorf("label %d = %g outside [0,1]", i, x)
		}
	}
}

// TestPropagateDamped: two documents far from each other, each with its
// own feature node (weights normalised as Build does). Undamped Jacobi
// swings their labels in a two-cycle, so the result depends on whether
// the iteration limit is odd or even; damped updates converge.
func TestPropagateDamped(t *testing.T) {
	g := &Graph{
		nodes:  make([]node, 3),
		dist:   [][]float64{{0, 0.5, 0.5}, {0.3, 0, 0.7}, {0.3, 0.7, 0}},
		feat:   [][]edge{nil, {{0, 1}}, {{1, 1}}},
		fnodes: [][]edge{{{1, 1}}, {{2, 1}}},
		seedC:  make([]float64, 3),
		seedS:  make([]float64, 3),
	}
	tests := []struct {
		damping   float64
		converges bool
	}{
		{0, true}, // the default, ½
		{0.5, true},
		{1, false}, // the paper's plain Jacobi
	}
	for _, tt := range tests {
		even, it := g.Propagate(Config{Damping: tt.damping, MaxIter: 200})
		odd, _ := g.Propagate(Config{Damping: tt.damping, MaxIter: 201})
		if got := it < 200; got != tt.converges {
			t.Errorf("damping %g: converged = %v after %d iterations, want %v", tt.damping, got, it, tt.converges)
		}
		if swing := math.Abs(even[1] - odd[1]); tt.converges && swing > 1e-5 {
			t.Errorf("damping %g: label depends on the iteration limit: %g vs %g", tt.damping, even[1], odd[1])
		}
	}
	if _, err := New(nil, nil, Config{Damping: 1.5}); err == nil || !strings.Contains(err.Error(), "damping") {
		t.Errorf("damping 1.5 accepted: %v", err)
	}
}

func TestRejectsBadInput(t *testing.T) {
	space, tm := fixture(t)
	if _, err := New(space, tm, Config{MuPP: 0.1, MuNP: 0.2}); err == nil || !strings.Contains(err.Error(), "convex") {
		t.Errorf("mu_np > mu_pp accepted: %v", err)
	}
	if _, err := New(space, tm, Config{Dropout: 1}); err == nil {
		t.Error("dropout 1 accepted")
	}
	m, _ := New(space, tm, Config{})
	if _, err := m.Score(context.Background(), "the of and", []string{"bank"}); err == nil {
		t.Error("query without vectors accepted")
	}
}

// TestCollectionHops: with a collection, the pool documents are nodes
// from the start, and the k nearest of the query's k nearest join them
// whether those are pool or collection documents.
func TestCollectionHops(t *testing.T) {
	space, tm := fixture(t)
	pool := []string{"bank loan salary", "sand desert"}
	coll := []string{"bank account", "camping beach"}
	tests := []struct {
		hops int
		want []string // collection documents among the nodes
	}{
		{1, nil},                      // the query's nearest is pool document 0
		{2, []string{"bank account"}}, // pool document 0's nearest
	}
	for _, tc := range tests {
		m, err := New(space, tm, Config{K: 1, Hops: tc.hops})
		if err != nil {
			t.Fatal(err)
		}
		m.SetCollection(coll)
		g, err := m.Build(context.Background(), "bank salary loan", pool)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, nd := range g.nodes[1:] {
			if nd.pool < 0 {
				got = append(got, strings.Join(nd.tokens, " "))
			}
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("hops %d: collection nodes %q, want %q", tc.hops, got, tc.want)
		}
	}
}

// TestDistancesCancelled: the O(n²) WMD edges of a graph stop on a
// cancelled context.
func TestDistancesCancelled(t *testing.T) {
	space, tm := fixture(t)
	m, _ := New(space, tm, Config{K: 2})
	g, err := m.Build(context.Background(), "bank salary loan", []string{"bank loan", "sand desert", "loan account"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.distances(ctx, space, EdgesWMD, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want %v", err, context.Canceled)
	}
}

// TestRejectsNonFiniteConfig: a NaN or infinite weight (YAML's .nan and
// .inf reach stage options as such) or a negative iteration limit is
// refused when the model is made, not turned into NaN or tied labels.
func TestRejectsNonFiniteConfig(t *testing.T) {
	space, tm := fixture(t)
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"mu_pp NaN", Config{MuPP: nan}},
		{"mu_pp +Inf", Config{MuPP: inf}},
		{"mu_np NaN", Config{MuNP: nan}},
		{"dropout NaN", Config{Dropout: nan}},
		{"tol NaN", Config{Tol: nan}},
		{"max_dist NaN", Config{MaxDist: nan}},
		{"max_iter -1", Config{MaxIter: -1}},
	} {
		if _, err := New(space, tm, tc.cfg); err == nil {
			t.Errorf("%s accepted", tc.name)
		}
	}
}

// TestGraphEdges checks each way of weighing the edges between a graph's
// documents: the exact WMD (bit for bit space.WMD's) or the WCD of each
// pair, normalised per node; the graph does not depend on how many
// goroutines built it; and an unknown way is refused.
func TestGraphEdges(t *testing.T) {
	space, tm := fixture(t)
	pool := []string{
		"beach desert camping", "bank loan salary", "sand beach", "loan account bank", "desert sand camping beach",
		"bank account", "sand desert", "loan salary", "camping beach bank", "salary account loan desert",
	}
	tests := []struct {
		how  string
		dist func(a, b wmd.Doc) float64
	}{
		{EdgesWMD, func(a, b wmd.Doc) float64 { d, _ := space.WMD(a, b); return d }},
		{EdgesWCD, space.WCD},
	}
	for _, tc := range tests {
		t.Run(tc.how, func(t *testing.T) {
			m, err := New(space, tm, Config{K: 3, Edges: tc.how})
			if err != nil {
				t.Fatal(err)
			}
			var graphs []*Graph
			for _, procs := range []int{1, 4} {
				was := runtime.GOMAXPROCS(procs)
				g, err := m.Build(context.Background(), "bank salary loan", pool)
				runtime.GOMAXPROCS(was)
				if err != nil {
					t.Fatal(err)
				}
				graphs = append(graphs, g)
			}
			g := graphs[0]
			if !reflect.DeepEqual(g.dist, graphs[1].dist) || !reflect.DeepEqual(g.feat, graphs[1].feat) {
				t.Fatal("the graphs built on 1 and on 4 procs differ")
			}
			for i := range g.nodes {
				want := make([]float64, len(g.nodes))
				for j := range g.nodes {
					if i != j {
						want[j] = tc.dist(g.nodes[min(i, j)].doc, g.nodes[max(i, j)].doc)
					}
				}
				normalise(want)
				if !reflect.DeepEqual(g.dist[i], want) {
					t.Errorf("row %d: %v, want %v", i, g.dist[i], want)
				}
			}
		})
	}
	if _, err := New(space, tm, Config{Edges: "rwmd"}); err == nil || !strings.Contains(err.Error(), "edges") {
		t.Errorf("edges %q: error %v, want one naming the option", "rwmd", err)
	}
}

// TestShared finds the features two or more nodes hold, and their nodes,
// as a map keyed by the features does: from the nodes' hashes, and when
// hashes collide or a node lacks them.
func TestShared(t *testing.T) {
	space, tm := fixture(t)
	pool := []string{
		"beach desert camping", "bank loan salary", "sand beach", "loan account bank", "desert sand camping beach",
		"bank account", "sand desert", "loan salary", "camping beach bank", "salary account loan desert",
	}
	m, err := New(space, tm, Config{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Build(context.Background(), "bank salary loan", pool)
	if err != nil {
		t.Fatal(err)
	}
	wantNames, wantOwners := g.sharedByName()
	if len(wantNames) < 3 {
		t.Fatalf("only %d shared features: %v", len(wantNames), wantNames)
	}
	for k, o := range wantOwners {
		if len(o) < 2 {
			t.Errorf("feature %q held by %v", wantNames[k], o)
		}
	}
	collide := func(g *Graph) {
		for i := range g.nodes {
			g.nodes[i].hashes = make([]uint64, len(g.nodes[i].grams)) // all 0
		}
	}
	lack := func(g *Graph) { g.nodes[len(g.nodes)-1].hashes = nil }
	for _, tc := range []struct {
		name  string
		alter func(*Graph)
	}{
		{"hashes", func(*Graph) {}},
		{"colliding hashes", collide},
		{"a node without hashes", lack},
	} {
		h := &Graph{nodes: slices.Clone(g.nodes)}
		tc.alter(h)
		names, owners := h.shared()
		if !reflect.DeepEqual(names, wantNames) || !reflect.DeepEqual(owners, wantOwners) {
			t.Errorf("%s: shared() = %v, %v; want %v, %v", tc.name, names, owners, wantNames, wantOwners)
		}
	}
}
