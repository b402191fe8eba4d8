package ssg

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/models/topics"
	"github.com/semrank/semrank/models/wmd"
)

// questions returns the first n questions of the SemEval slice in
// testdata/embed, named q0, q1, ..., and a model over the GloVe slice
// there with a topic model trained on them.
func questions(t testing.TB, n int, cfg Config) (*Model, []string, []string) {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "embed")
	f, err := os.Open(filepath.Join(dir, "glove-slice.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := embed.ReadGloVe(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "questions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var ids, texts []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && len(texts) < n {
		ids = append(ids, fmt.Sprintf("q%d", len(texts)))
		texts = append(texts, sc.Text())
	}
	tm, err := topics.Train(context.Background(), embed.Sentences(texts), topics.Config{K: 5})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(wmd.NewSpace(v), tm, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, ids, texts
}

// TestNeighboursExact: each list holds the document's nearest others by
// exact WMD, as an exhaustive search finds them, and its radius is its
// last distance.
func TestNeighboursExact(t *testing.T) {
	m, ids, texts := questions(t, 150, Config{})
	const size = 12
	calls := 0
	n, err := BuildNeighbours(context.Background(), m.Space, ids, texts, size, func(int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if calls != len(texts) {
		t.Errorf("progress called %d times for %d documents", calls, len(texts))
	}
	docs := m.Docs(texts)
	idx := m.Space.NewIndex(docs)
	for a := range docs {
		nb, dist, radius := n.List(a)
		if docs[a].Empty() {
			if len(nb) != 0 {
				t.Errorf("document %d has no word with a vector but a list %v", a, nb)
			}
			continue
		}
		want, _, err := idx.Exhaustive(context.Background(), docs[a], size, wmd.Options{Exclude: func(i int) bool { return i == a }})
		if err != nil {
			t.Fatal(err)
		}
		if len(nb) != len(want) {
			t.Fatalf("document %d: %d neighbours, want %d", a, len(nb), len(want))
		}
		for k, w := range want {
			if int(nb[k]) != w.Doc || dist[k] != w.Dist {
				t.Errorf("document %d, neighbour %d: %d at %v, want %d at %v", a, k, nb[k], dist[k], w.Doc, w.Dist)
			}
		}
		if radius != dist[len(dist)-1] {
			t.Errorf("document %d: radius %v, last distance %v", a, radius, dist[len(dist)-1])
		}
	}
}

// TestNeighboursLeaveGraphsAlone: query graphs built with neighbour lists
// have the nodes and scores of those built without, whether the lists
// cover a window's searches (long lists) or few of them (short ones),
// and when some pool documents changed since the lists were computed or
// were never in the collection; and the lists did spare the searches
// work.
func TestNeighboursLeaveGraphsAlone(t *testing.T) {
	ctx := context.Background()
	m, ids, texts := questions(t, 240, Config{K: 5})
	for _, size := range []int{3, 30, 239} {
		n, err := BuildNeighbours(ctx, m.Space, ids, texts, size, nil)
		if err != nil {
			t.Fatal(err)
		}
		with, err := New(m.Space, m.Topics, m.Config)
		if err != nil {
			t.Fatal(err)
		}
		if err := with.SetNeighbours(n); err != nil {
			t.Fatal(err)
		}
		known := 0
		for q := 0; q < 12; q++ {
			lo := 20 * q
			pool, pids := slicesOf(texts, lo, 60), slicesOf(ids, lo, 60)
			switch q % 3 {
			case 1: // a document edited since, one never listed
				pool[7] += " salary visa"
				pids[9] = "new"
			case 2: // the pool in another order, a document in it twice
				for i, j := 0, len(pool)-1; i < j; i, j = i+1, j-1 {
					pool[i], pool[j], pids[i], pids[j] = pool[j], pool[i], pids[j], pids[i]
				}
				pool, pids = append(pool, pool[3]), append(pids, pids[3])
			}
			query := texts[(lo+130)%len(texts)]
			sameGraphs(t, fmt.Sprintf("lists of %d, query %d", size, q), m, with, query, pool, pids)
			qd, _ := m.Space.NewIndex(m.Docs(pool)).Distances(ctx, m.Space.Doc(query), seq(len(pool)))
			for _, f := range with.floors(pids, m.Docs(pool), len(pool), nearest(qd, m.Config.K), &wmd.Pairs{}) {
				if f != nil {
					known++
				}
			}
		}
		if known == 0 {
			t.Errorf("lists of %d: no 2-hop search started from a list", size)
		}
	}
}

// sameGraphs checks that without and with (the same model, with lists)
// build query graphs of the same nodes and scores over pool (named by
// ids). A listed distance may differ from the window's in the last bits
// (solved with the other document's words as rows), so two documents at
// one distance may trade places in the nodes' order.
func sameGraphs(t *testing.T, label string, without, with *Model, query string, pool, ids []string) {
	t.Helper()
	ctx := context.Background()
	g0, err := without.BuildFrom(ctx, query, pool, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	g1, err := with.BuildFrom(ctx, query, pool, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p0, p1 := nodePools(g0), nodePools(g1); !reflect.DeepEqual(sorted(p0), sorted(p1)) {
		t.Errorf("%s: nodes %v, without lists %v", label, p1, p0)
	}
	s0, s1 := g0.Scores(without.Config), g1.Scores(without.Config)
	for i := range s0 {
		if math.Abs(s0[i]-s1[i]) > 1e-12 {
			t.Errorf("%s: document %d scores %v, without lists %v", label, i, s1[i], s0[i])
		}
	}
}

func slicesOf(s []string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s[(from+i)%len(s)]
	}
	return out
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func sorted(s []int) []int { return slices.Sorted(slices.Values(s)) }

// nodePools returns the pool indexes of g's document nodes, in order.
func nodePools(g *Graph) []int {
	var out []int
	for _, nd := range g.nodes[1:] {
		out = append(out, nd.pool)
	}
	return out
}

// saved returns the file n is saved to.
func saved(t testing.TB, n *Neighbours) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lists")
	if err := n.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNeighboursRoundTrip: saved lists read back the same, and a model
// refuses lists computed in other word vectors.
func TestNeighboursRoundTrip(t *testing.T) {
	m, ids, texts := questions(t, 60, Config{})
	n, err := BuildNeighbours(context.Background(), m.Space, ids, texts, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := LoadNeighbours(saved(t, n))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, n) {
		t.Error("lists read back differ")
	}
	v := m.Space.Vectors()
	data := append([]float64(nil), v.Data...)
	data[0] += 1e-6
	other, err := embed.NewVectors(v.Words, v.Dim, data)
	if err != nil {
		t.Fatal(err)
	}
	om, err := New(wmd.NewSpace(other), m.Topics, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := om.SetNeighbours(n); err == nil || !strings.Contains(err.Error(), "other word vectors") {
		t.Errorf("lists over other vectors: error %v", err)
	}
}

func TestBuildNeighboursRefuses(t *testing.T) {
	m, _, _ := questions(t, 5, Config{})
	for _, tc := range []struct {
		ids, texts []string
		size       int
		want       string
	}{
		{[]string{"a"}, []string{"visa", "bank"}, 3, "1 ids for 2 texts"},
		{[]string{"a", "a"}, []string{"visa", "bank"}, 3, `"a" given twice`},
		{[]string{"a", "b"}, []string{"visa", "bank"}, 0, "want ≥ 1"},
	} {
		if _, err := BuildNeighbours(context.Background(), m.Space, tc.ids, tc.texts, tc.size, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, %v, %d: error %v, want %q", tc.ids, tc.texts, tc.size, err, tc.want)
		}
	}
}

// FuzzReadNeighbours: any bytes read as lists give lists or an error,
// never a panic, and lists read are consistent: every neighbour a
// document of the collection other than the listed one.
func FuzzReadNeighbours(f *testing.F) {
	m, ids, texts := questions(f, 20, Config{})
	n, err := BuildNeighbours(context.Background(), m.Space, ids, texts, 4, nil)
	if err != nil {
		f.Fatal(err)
	}
	raw, err := os.ReadFile(saved(f, n))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add(raw[:len(raw)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ReadNeighbours(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		for a := range n.Len() {
			nb, _, _ := n.List(a)
			for _, x := range nb {
				if x < 0 || int(x) >= n.Len() || int(x) == a {
					t.Fatalf("document %d lists %d", a, x)
				}
			}
		}
	})
}

// TestUpdateNeighbours: lists brought up to date with a collection that
// lost, changed and gained documents search only the documents added or
// edited, whose lists are those computed anew over the collection; the
// others keep their lists less the documents gone; query graphs over the
// new collection, its new and edited documents among the pool, are those
// built without lists; and a second update with nothing changed searches
// nothing.
func TestUpdateNeighbours(t *testing.T) {
	ctx := context.Background()
	m, ids, texts := questions(t, 260, Config{K: 5})
	const size = 40
	old, err := BuildNeighbours(ctx, m.Space, ids[:200], texts[:200], size, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Now: documents 0–9 deleted, 10–14 edited, 200–259 added.
	nowIDs, nowTexts := slices.Clone(ids[10:]), slices.Clone(texts[10:])
	for i := range 5 {
		nowTexts[i] += " visa salary"
	}
	n, searched, err := UpdateNeighbours(ctx, m.Space, old, nowIDs, nowTexts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := 5 + 60; searched != want {
		t.Errorf("searched %d documents, want %d (edited and added)", searched, want)
	}
	fresh, err := BuildNeighbours(ctx, m.Space, nowIDs, nowTexts, size, nil)
	if err != nil {
		t.Fatal(err)
	}
	for a := range nowIDs {
		nb, dist, radius := n.List(a)
		if a < 5 || a >= 190 {
			fnb, fdist, fradius := fresh.List(a)
			if !slices.Equal(nb, fnb) || !slices.Equal(dist, fdist) || radius != fradius {
				t.Errorf("%s (edited or added): list %v, want %v", nowIDs[a], nb, fnb)
			}
			continue
		}
		onb, odist, oradius := old.List(a + 10)
		var want []int32
		var wantDist []float64
		for k, b := range onb {
			if b >= 15 { // neither deleted nor edited
				want, wantDist = append(want, b-10), append(wantDist, odist[k])
			}
		}
		if !slices.Equal(nb, want) || !slices.Equal(dist, wantDist) || radius != oradius {
			t.Errorf("%s (kept): list %v, want %v", nowIDs[a], nb, want)
		}
	}
	if back, err := LoadNeighbours(saved(t, n)); err != nil || !reflect.DeepEqual(back, n) {
		t.Fatalf("updated lists read back: %v", err)
	}
	with, err := New(m.Space, m.Topics, m.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := with.SetNeighbours(n); err != nil {
		t.Fatal(err)
	}
	for q := range 10 {
		lo := (17 * q) % len(nowIDs)
		pool, pids := slicesOf(nowTexts, lo, 70), slicesOf(nowIDs, lo, 70)
		pool, pids = append(pool, nowTexts[:5]...), append(pids, nowIDs[:5]...)
		query := nowTexts[(lo+100)%len(nowTexts)]
		sameGraphs(t, fmt.Sprintf("query %d", q), m, with, query, pool, pids)
	}
	again, searched, err := UpdateNeighbours(ctx, m.Space, n, nowIDs, nowTexts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if searched != 0 {
		t.Errorf("an update with nothing changed searched %d documents", searched)
	}
	for a := range nowIDs {
		nb, _, _ := again.List(a)
		want, _, _ := n.List(a)
		if !slices.Equal(nb, want) {
			t.Fatalf("%s: list changed by an update with nothing changed", nowIDs[a])
		}
	}
}

// TestNeighboursGenerations: a list bounds by its radius only the
// documents known when it was computed: an older list, one added after
// it, would be bounded wrongly (its distance may lie below the radius).
func TestNeighboursGenerations(t *testing.T) {
	ctx := context.Background()
	m, ids, texts := questions(t, 120, Config{})
	old, err := BuildNeighbours(ctx, m.Space, ids[:60], texts[:60], 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, _, err := UpdateNeighbours(ctx, m.Space, old, ids, texts, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := m.Docs(texts)
	below := 0
	for a := range 60 {
		_, _, radius := n.List(a)
		for b := 60; b < 120; b++ {
			if n.bounds(int32(a), int32(b)) {
				t.Fatalf("document %d's list (generation %d) bounds %d (generation %d)", a, n.gen[a], b, n.gen[b])
			}
			if d, _ := m.Space.WMD(docs[a], docs[b]); d < radius {
				below++
			}
		}
		if !n.bounds(int32(a), int32((a+1)%60)) || !n.bounds(int32(a+60), int32(a)) {
			t.Fatalf("document %d: lists of its generation or later do not bound it", a)
		}
	}
	if below == 0 {
		t.Error("no document added after a list lay within its radius: the test shows nothing")
	}
}

// TestReadNeighboursRefuses: lists that contradict themselves are
// refused when read, with the document named.
func TestReadNeighboursRefuses(t *testing.T) {
	m, ids, texts := questions(t, 20, Config{})
	for _, tc := range []struct {
		name  string
		spoil func(n *Neighbours)
		want  string
	}{
		{"itself", func(n *Neighbours) { n.nb[1*4] = 1 }, `list of document "q1": entry 0 is 1`},
		{"twice", func(n *Neighbours) { n.nb[2*4+1] = n.nb[2*4] }, `list of document "q2": entry 1`},
		{"out of range", func(n *Neighbours) { n.nb[3*4+2] = 20 }, `list of document "q3": entry 2 is 20`},
		{"after the end", func(n *Neighbours) { n.nb[4*4+1] = -1 }, `list of document "q4": entry 2`},
		{"nearer later", func(n *Neighbours) { n.dist[5*4+3] = n.dist[5*4+2] / 2 }, `list of document "q5": distance 3`},
		{"radius", func(n *Neighbours) { n.radius[6] = n.dist[6*4+3] / 2 }, `radius of document "q6"`},
		{"generation", func(n *Neighbours) { n.gen[7] = 1 }, `list of document "q7": generation 1`},
	} {
		n, err := BuildNeighbours(context.Background(), m.Space, ids, texts, 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		tc.spoil(n)
		if _, err := LoadNeighbours(saved(t, n)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
