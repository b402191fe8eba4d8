package ssg

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/floats"

	"github.com/semrank/semrank/internal/textcache"
	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/models/topics"
	"github.com/semrank/semrank/models/wmd"
)

// Config sets the graph, seeds and propagation; zero fields take defaults.
type Config struct {
	K       int     `json:"k"`        // neighbours per hop (default 10)
	Hops    int     `json:"hops"`     // 1 or 2 (default 2)
	MaxDist float64 `json:"max_dist"` // drop WMD edges longer than this (0: keep all)
	Seeds   int     `json:"seeds"`    // k', soft seeds of each kind (default 3)
	MuPP    float64 `json:"mu_pp"`    // prior weight (default 0.1)
	MuNP    float64 `json:"mu_np"`    // neighbourhood weight (default 0.09)
	Dropout float64 `json:"dropout"`  // p on seed edges; 0 = SSG-WD
	Tol     float64 `json:"tol"`      // convergence threshold (default 1e-6)
	// Damping ω in (0,1] moves each label by ω of the way to its Jacobi
	// update (default 0.5; 1 is the paper's undamped Jacobi). Same fixed
	// points; see the package doc for why undamped updates oscillate.
	Damping float64 `json:"damping,omitempty"`
	MaxIter int     `json:"max_iter"` // default 200
	Seed    uint64  `json:"seed"`
	// Edges weighs the distance edges between the graph's documents:
	// EdgesWCD (the default) or EdgesWMD.
	Edges string `json:"edges,omitempty"`
}

// The ways Config.Edges weighs the edges between a graph's documents.
const (
	// EdgesWCD weighs an edge by the Word Centroid Distance, the lower
	// bound of WMD that Kusner et al.'s k-NN search prefetches with: a
	// graph's n²/2 edges then cost n²/2 vector distances instead of as
	// many transport problems, and rankings do not change significantly
	// (docs/RESULTS.md).
	EdgesWCD = "wcd"
	// EdgesWMD weighs an edge by the exact WMD, as the paper does.
	EdgesWMD = "wmd"
)

func (c Config) withDefaults() Config {
	if c.K == 0 {
		c.K = 10
	}
	if c.Hops == 0 {
		c.Hops = 2
	}
	if c.Seeds == 0 {
		c.Seeds = 3
	}
	if c.MuPP == 0 {
		c.MuPP = 0.1
	}
	if c.MuNP == 0 {
		c.MuNP = 0.09
	}
	if c.Tol == 0 {
		c.Tol = 1e-6
	}
	if c.Damping == 0 {
		c.Damping = 0.5
	}
	if c.MaxIter == 0 {
		c.MaxIter = 200
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Edges == "" {
		c.Edges = EdgesWCD
	}
	return c
}

func (c Config) check() error {
	switch {
	case c.K < 1 || c.Hops < 1 || c.Hops > 2 || c.Seeds < 0:
		return errors.New("ssg: k ≥ 1, hops 1 or 2 and seeds ≥ 0 required")
	// The comparisons are written so that NaN fails them: a NaN weight
	// would make every label NaN or tie them all.
	case !(c.MuNP >= 0 && c.MuNP < c.MuPP) || math.IsInf(c.MuPP, 1):
		return errors.New("ssg: need 0 ≤ mu_np < mu_pp, both finite (keeps every node's objective convex)")
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return errors.New("ssg: dropout must be in [0,1)")
	case !(c.Damping >= 0 && c.Damping <= 1):
		return errors.New("ssg: damping must be in (0,1] (0 picks the default)")
	case math.IsNaN(c.Tol) || math.IsNaN(c.MaxDist):
		return errors.New("ssg: tol and max_dist must be numbers")
	case c.MaxIter < 0:
		return fmt.Errorf("ssg: max_iter %d: want ≥ 1 (0 picks the default)", c.MaxIter)
	case c.Edges != EdgesWCD && c.Edges != EdgesWMD:
		return fmt.Errorf("ssg: edges %q: want %q or %q", c.Edges, EdgesWCD, EdgesWMD)
	}
	return nil
}

// ErrEmptyQuery is returned for a query with no word that has a vector.
var ErrEmptyQuery = errors.New("ssg: query has no word with a vector")

// Model holds what SSG needs: word vectors and a topic model.
type Model struct {
	Space  *wmd.Space
	Topics *topics.Model
	Config Config
	coll   *collection
	lists  *Neighbours

	once  sync.Once
	texts *textcache.Cache[node] // pool documents' nodes, by text
}

// analyse returns the node of a document of the given words: its nBOW,
// features and topic representation, which depend on its text alone.
func (m *Model) analyse(tokens []string) node {
	gs := grams(tokens)
	hs := make([]uint64, len(gs))
	for k, f := range gs {
		hs[k] = gramHash(f)
	}
	return node{pool: -1, tokens: tokens, doc: m.Space.DocFromTokens(tokens), grams: gs, hashes: hs, rep: m.Topics.Represent(tokens)}
}

// textNodes returns the nodes of texts (pool: −1), from the cache where a
// text was seen recently (a candidate is often in the pools of many
// queries), the others analysed on every core.
func (m *Model) textNodes(texts []string) []node {
	m.once.Do(func() {
		m.texts = textcache.New(func(t string) node { return m.analyse(embed.Tokenize(t)) })
	})
	return m.texts.GetAll(texts)
}

// New checks cfg and returns a model.
func New(space *wmd.Space, tm *topics.Model, cfg Config) (*Model, error) {
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if space == nil || tm == nil {
		return nil, errors.New("ssg: word vectors and topic model are required")
	}
	return &Model{Space: space, Topics: tm, Config: cfg}, nil
}

// Docs returns the nBOWs of texts in m.Space, as a graph's nodes hold
// them (cached by text).
func (m *Model) Docs(texts []string) []wmd.Doc {
	nodes := m.textNodes(texts)
	out := make([]wmd.Doc, len(texts))
	for i, nd := range nodes {
		out[i] = nd.doc
	}
	return out
}

// node is one document of a query graph (index 0 is the query).
type node struct {
	pool   int // index in the pool, -1 for the query and collection documents
	tokens []string
	doc    wmd.Doc
	grams  []string // its features (see grams)
	hashes []uint64 // gramHash of each of grams
	rep    topics.Rep
}

// Graph is the query-induced subgraph with its seeds, ready to propagate.
type Graph struct {
	nodes  []node
	dist   [][]float64 // row-normalised WMD weights between document nodes
	feat   [][]edge    // document node → feature nodes
	fnodes [][]edge    // feature node → document nodes
	seedC  []float64   // initial label of each document node
	seedS  []float64   // seed strength s_i (0: not a seed)
	qdist  []float64   // WMD from the query to each pool document
}

type edge struct {
	to int
	w  float64
}

// collection holds context documents a graph may draw neighbours from
// besides the pool.
type collection struct {
	texts []string
	nodes []node
	docs  []wmd.Doc
}

// SetCollection makes every graph draw its neighbours from texts as well
// as from the pool, as the paper's graphs draw them from the whole
// question collection; the pool's documents are then always nodes of the
// graph (they are what is scored), and the query's k nearest documents of
// pool and collection, and their k nearest, join them. Texts without a
// word that has a vector are skipped. Call it before the model is shared.
func (m *Model) SetCollection(texts []string) {
	c := &collection{}
	seen := map[string]bool{}
	for _, t := range texts {
		if seen[t] {
			continue
		}
		seen[t] = true
		nd := m.analyse(embed.Tokenize(t))
		if nd.doc.Empty() {
			continue
		}
		c.texts = append(c.texts, t)
		c.nodes = append(c.nodes, nd)
		c.docs = append(c.docs, nd.doc)
	}
	m.coll = c
}

// Build constructs the query graph over a pool of documents (and the
// collection, when set).
func (m *Model) Build(ctx context.Context, query string, pool []string) (*Graph, error) {
	return m.BuildFrom(ctx, query, pool, nil, nil)
}

// BuildFrom is Build given ids, the pool documents' IDs, for the model's
// neighbour lists (SetNeighbours) to recognise them (nil: none), and qdist,
// the WMD from query to each pool document in m.Space
// (wmd.Index.Distances' or Space.WMD's), when another stage has computed
// them (nil computes them).
func (m *Model) BuildFrom(ctx context.Context, query string, pool, ids []string, qdist []float64) (*Graph, error) {
	if qdist != nil && len(qdist) != len(pool) {
		return nil, fmt.Errorf("ssg: %d query distances for %d pool documents", len(qdist), len(pool))
	}
	if ids != nil && len(ids) != len(pool) {
		return nil, fmt.Errorf("ssg: %d ids for %d pool documents", len(ids), len(pool))
	}
	cfg := m.Config
	q := m.analyse(embed.Tokenize(query))
	if q.doc.Empty() {
		return nil, ErrEmptyQuery
	}
	nodes := m.textNodes(pool)
	docs := make([]wmd.Doc, len(pool))
	all := make([]int, len(pool))
	for i := range nodes {
		nodes[i].pool, docs[i], all[i] = i, nodes[i].doc, i
	}
	g := &Graph{nodes: []node{q}}
	np := len(pool)
	var skip func(int) bool
	if c := m.coll; c != nil {
		// Collection copies of the query or of a pool document would
		// duplicate a node.
		dup := map[string]bool{query: true}
		for _, p := range pool {
			dup[p] = true
		}
		docs = append(docs, c.docs...)
		nodes = append(nodes, c.nodes...)
		skip = func(i int) bool { return i >= np && dup[c.texts[i-np]] }
	}
	idx := m.Space.NewIndex(docs)
	g.qdist = qdist
	var err error
	if qdist == nil {
		if g.qdist, err = idx.Distances(ctx, q.doc, all); err != nil {
			return nil, err
		}
	}
	in := map[int]bool{}
	add := func(nb []wmd.Neighbor) {
		for _, n := range nb {
			if !in[n.Doc] {
				in[n.Doc] = true
				g.nodes = append(g.nodes, nodes[n.Doc])
			}
		}
	}
	if m.coll != nil {
		for i, d := range docs[:np] {
			if !d.Empty() {
				add([]wmd.Neighbor{{Doc: i}})
			}
		}
	}
	// The paper's WCD prefilter, 10·k. The index serves this graph's few
	// searches only: not worth a projected vocabulary.
	opt := wmd.Options{Prefetch: 10 * cfg.K, Exclude: skip, NoProjection: true}
	var nb []wmd.Neighbor
	if m.coll == nil && opt.Prefetch >= np {
		// Every candidate is in reach and its exact WMD known: the k
		// nearest are what KNN would find.
		nb = nearest(g.qdist, cfg.K)
	} else if nb, _, err = idx.KNN(ctx, q.doc, cfg.K, opt); err != nil {
		return nil, err
	}
	add(nb)
	if cfg.Hops == 2 {
		// Every 1-hop neighbour's, including the pool documents a
		// collection made nodes already; searched concurrently, added in
		// the 1-hop order. Two neighbours near each other are in each
		// other's searches: each such pair is solved once (wmd.Pairs).
		hop2 := make([][]wmd.Neighbor, len(nb))
		pairs := &wmd.Pairs{}
		eg, ectx := errgroup.WithContext(ctx)
		eg.SetLimit(runtime.GOMAXPROCS(0))
		// Longest first, as far as a search's length can be told before
		// it runs (its document's words, which every bound and transport
		// problem of the search has as rows): ten searches shared by two
		// cores otherwise often end with one core waiting on the other's
		// long last search.
		floors := m.floors(ids, docs[:np], len(docs), nb, pairs)
		order := make([]int, len(nb))
		for h := range order {
			order[h] = h
		}
		slices.SortStableFunc(order, func(a, b int) int {
			return cmp.Compare(len(docs[nb[b].Doc].Words), len(docs[nb[a].Doc].Words))
		})
		for _, h := range order {
			self := nb[h].Doc
			o := opt
			o.Pairs, o.Self = pairs, self
			o.Exclude = func(i int) bool { return i == self || (skip != nil && skip(i)) }
			if f := floors[h]; f != nil {
				o.Floor = func(i int) float64 { return f[i] }
			}
			eg.Go(func() error {
				var err error
				hop2[h], _, err = idx.KNN(ectx, docs[self], cfg.K, o)
				return err
			})
		}
		if err := eg.Wait(); err != nil {
			return nil, err
		}
		for _, h := range hop2 {
			add(h)
		}
	}
	if err := g.distances(ctx, m.Space, cfg.Edges, cfg.MaxDist); err != nil {
		return nil, err
	}
	g.features(m.Topics)
	g.seeds(m.Topics, cfg.Seeds)
	return g, nil
}

// floors prepares the 2-hop searches from the 1-hop neighbours nb over
// the pool documents docs (named by ids), the first of the graph index's
// n, with what the model's neighbour lists know: each listed distance
// between a source and a pool document goes into pairs, and the search
// from source h gets floors[h], a lower bound on its distance to each of
// the n documents: its list's radius for those the lists knew when its
// list was computed but its list does not hold, 0 for the others.
// floors[h] is nil for a source the lists do not know.
func (m *Model) floors(ids []string, docs []wmd.Doc, n int, nb []wmd.Neighbor, pairs *wmd.Pairs) [][]float64 {
	floors := make([][]float64, len(nb))
	if m.lists == nil || ids == nil {
		return floors
	}
	known := make([]int32, len(docs))
	at := make(map[int32]int, len(docs)) // collection number → pool index
	twice := map[int32]bool{}
	for i, d := range docs {
		if known[i] = m.lists.lookup(ids[i], d); known[i] >= 0 {
			if _, dup := at[known[i]]; dup {
				twice[known[i]] = true
			}
			at[known[i]] = i
		}
	}
	// A document in the pool twice gets a listed distance at one place
	// only: at both, it is searched as one the lists do not know.
	for i, c := range known {
		if twice[c] {
			known[i] = -1
			delete(at, c)
		}
	}
	for h, src := range nb {
		self := src.Doc
		if self >= len(docs) || known[self] < 0 {
			continue
		}
		list, dist, radius := m.lists.List(int(known[self]))
		f := make([]float64, n)
		for i, c := range known {
			if c >= 0 && i != self && m.lists.bounds(known[self], c) {
				f[i] = radius
			}
		}
		for k, c := range list {
			if j, ok := at[c]; ok {
				pairs.Put(self, j, dist[k])
				f[j] = 0
			}
		}
		floors[h] = f
	}
	return floors
}

// SetNeighbours gives the model lists of its documents' nearest
// neighbours, computed in its word space, for the 2-hop searches of
// BuildFrom to start from; nil removes them. Call it before the model is
// shared.
func (m *Model) SetNeighbours(n *Neighbours) error {
	if n != nil {
		if got := m.Space.Fingerprint(); n.Config.Vectors != got {
			return fmt.Errorf("ssg: neighbour lists computed in other word vectors (fingerprint %s; these vectors' is %s): compute them again with these", n.Config.Vectors, got)
		}
	}
	m.lists = n
	return nil
}

// nearest returns the k documents of smallest finite distance, nearest
// first, ties by index, as wmd.Index.KNN orders them.
func nearest(dist []float64, k int) []wmd.Neighbor {
	var nb []wmd.Neighbor
	for i, d := range dist {
		if !math.IsInf(d, 1) {
			nb = append(nb, wmd.Neighbor{Doc: i, Dist: d})
		}
	}
	slices.SortFunc(nb, func(a, b wmd.Neighbor) int {
		if c := cmp.Compare(a.Dist, b.Dist); c != 0 {
			return c
		}
		return cmp.Compare(a.Doc, b.Doc)
	})
	return nb[:min(k, len(nb))]
}

// distances fills the complete edge set, weighed as Config.Edges says
// (how: EdgesWCD or EdgesWMD), each node's weights normalised to sum to 1.
// By EdgesWMD, row i's distances to the nodes after it are solved
// together (wmd.Index.Distances), bit for bit space.WMD's.
func (g *Graph) distances(ctx context.Context, space *wmd.Space, how string, maxDist float64) error {
	n := len(g.nodes)
	g.dist = make([][]float64, n)
	docs := make([]wmd.Doc, n)
	later := make([]int, n)
	for i := range g.dist {
		g.dist[i] = make([]float64, n)
		docs[i], later[i] = g.nodes[i].doc, i
	}
	idx := space.NewIndex(docs)
	weigh := idx.Distances
	if how == EdgesWCD {
		weigh = func(_ context.Context, q wmd.Doc, to []int) ([]float64, error) {
			out := make([]float64, len(to))
			for k, j := range to {
				out[k] = space.WCD(q, docs[j])
			}
			return out, nil
		}
	}
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for i := 0; i < n; i++ {
		eg.Go(func() error {
			row, err := weigh(ectx, docs[i], later[i+1:])
			if err != nil {
				return err
			}
			for k, d := range row {
				if math.IsInf(d, 1) || (maxDist > 0 && d > maxDist) {
					d = 0
				}
				j := i + 1 + k
				g.dist[i][j], g.dist[j][i] = d, d
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	for _, row := range g.dist {
		normalise(row)
	}
	return nil
}

func normalise(w []float64) {
	var s float64
	for _, x := range w {
		s += x
	}
	if s > 0 {
		for i := range w {
			w[i] /= s
		}
	}
}

// grams returns a node's word, n-gram and skip-gram features, each once,
// in the order the words first make them (which feature a node holds is
// what counts: shared sorts what the nodes share).
func grams(t []string) []string {
	seen := make(map[string]struct{}, 6*len(t))
	out := make([]string, 0, 6*len(t))
	add := func(f string) {
		if _, ok := seen[f]; !ok {
			seen[f] = struct{}{}
			out = append(out, f)
		}
	}
	for i, w := range t {
		add(w)
		if i+1 < len(t) {
			add(w + " " + t[i+1])
		}
		if i+2 < len(t) {
			add(w + " " + t[i+1] + " " + t[i+2])
			add(w + " _ " + t[i+2]) // skip-bigram
		}
		if i+3 < len(t) {
			add(w + " _ " + t[i+2] + " " + t[i+3]) // skip-trigrams
			add(w + " " + t[i+1] + " _ " + t[i+3])
		}
	}
	return slices.Clone(out) // its own size: nodes are cached
}

// features adds a feature node for every feature two or more graph nodes
// share, weighted by its IDF; each document node's weights sum to 1.
func (g *Graph) features(tm *topics.Model) {
	names, owners := g.shared()
	g.feat = make([][]edge, len(g.nodes))
	g.fnodes = make([][]edge, len(names))
	for fi, f := range names {
		var idf float64
		for w := range strings.FieldsSeq(f) {
			if w != "_" {
				idf += tm.IDF(w)
			}
		}
		for _, i := range owners[fi] {
			g.feat[i] = append(g.feat[i], edge{fi, idf})
			g.fnodes[fi] = append(g.fnodes[fi], edge{i, idf})
		}
	}
	for _, es := range append(g.feat, g.fnodes...) {
		var s float64
		for _, e := range es {
			s += e.w
		}
		for k := range es {
			if s > 0 {
				es[k].w /= s
			}
		}
	}
}

// gramSeed seeds gramHash for the process: nodes cached by text keep
// their features' hashes.
var gramSeed = maphash.MakeSeed()

// gramHash hashes a feature for shared.
func gramHash(f string) uint64 { return maphash.String(gramSeed, f) }

// shared returns the features two or more of g's nodes hold, sorted, and
// the nodes holding each, in node order. A graph's nodes hold thousands of
// features, so they are matched by their hashes, without a map: every
// node's hashes are laid out by their leading bits in buckets of two to
// four, node order kept, and equal hashes are then neighbours within a
// bucket. Two features of one hash are told apart by name, and should
// that ever happen sharedByName answers.
func (g *Graph) shared() ([]string, [][]int) {
	type entry struct {
		h       uint64
		node, k int32 // g.nodes[node].grams[k]
	}
	total := g.featureCount()
	shift := 64 - max(1, bits.Len(uint(total))-2)
	start := make([]int32, (1<<(64-shift))+1)
	for _, n := range g.nodes {
		if len(n.hashes) != len(n.grams) {
			return g.sharedByName()
		}
		for _, h := range n.hashes {
			start[h>>shift+1]++
		}
	}
	for b := 1; b < len(start); b++ {
		start[b] += start[b-1]
	}
	es := make([]entry, total)
	next := slices.Clone(start[:len(start)-1])
	for i, n := range g.nodes {
		for k, h := range n.hashes {
			b := h >> shift
			es[next[b]] = entry{h, int32(i), int32(k)}
			next[b]++
		}
	}
	type feature struct {
		name   string
		owners []int
	}
	var fs []feature
	for b := 0; b+1 < len(start); b++ {
		bucket := es[start[b]:start[b+1]]
		// Insertion sort by hash, stable: nodes stay in order among equals.
		for i := 1; i < len(bucket); i++ {
			for j := i; j > 0 && bucket[j].h < bucket[j-1].h; j-- {
				bucket[j], bucket[j-1] = bucket[j-1], bucket[j]
			}
		}
		for i := 0; i < len(bucket); {
			j := i + 1
			for j < len(bucket) && bucket[j].h == bucket[i].h {
				j++
			}
			if j-i >= 2 {
				name := g.nodes[bucket[i].node].grams[bucket[i].k]
				owners := make([]int, j-i)
				for e := i; e < j; e++ {
					// A node holds each feature once: the same node twice,
					// or another name, is two features of one hash.
					if g.nodes[bucket[e].node].grams[bucket[e].k] != name || (e > i && bucket[e].node == bucket[e-1].node) {
						return g.sharedByName()
					}
					owners[e-i] = int(bucket[e].node)
				}
				fs = append(fs, feature{name, owners})
			}
			i = j
		}
	}
	slices.SortFunc(fs, func(a, b feature) int { return strings.Compare(a.name, b.name) })
	names, owners := make([]string, len(fs)), make([][]int, len(fs))
	for k, f := range fs {
		names[k], owners[k] = f.name, f.owners
	}
	return names, owners
}

// featureCount returns the number of features g's nodes hold, counting each
// node's.
func (g *Graph) featureCount() int {
	n := 0
	for _, nd := range g.nodes {
		n += len(nd.grams)
	}
	return n
}

// sharedByName is shared by a map keyed by the features themselves.
func (g *Graph) sharedByName() ([]string, [][]int) {
	by := make(map[string][]int, g.featureCount())
	for i, n := range g.nodes {
		for _, f := range n.grams {
			by[f] = append(by[f], i)
		}
	}
	var names []string
	for f, o := range by {
		if len(o) >= 2 {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	owners := make([][]int, len(names))
	for k, f := range names {
		owners[k] = by[f]
	}
	return names, owners
}

func cosine(a, b []float64) float64 {
	na, nb := floats.Norm(a, 2), floats.Norm(b, 2)
	if na == 0 || nb == 0 {
		return 0
	}
	return floats.Dot(a, b) / (na * nb)
}

func share(v []float64, l int) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	if s == 0 {
		return 0
	}
	return v[l] / s
}

// seeds picks the 1-seeds and 0-seeds from the topic model.
func (g *Graph) seeds(tm *topics.Model, k int) {
	n := len(g.nodes)
	g.seedC = make([]float64, n)
	g.seedS = make([]float64, n)
	g.seedC[0], g.seedS[0] = 1, 1
	reps := make([]topics.Rep, n)
	for i, nd := range g.nodes {
		reps[i] = nd.rep
	}
	l := reps[0].Cluster
	type cand struct {
		i int
		v float64
	}
	var ones []cand
	for i := 1; i < n; i++ {
		if reps[i].Cluster == l {
			if c := cosine(reps[0].Catch, reps[i].Catch); c > 0 {
				ones = append(ones, cand{i, c})
			}
		}
	}
	sort.Slice(ones, func(a, b int) bool { return ones[a].v > ones[b].v || (ones[a].v == ones[b].v && ones[a].i < ones[b].i) })
	for _, c := range ones[:min(k, len(ones))] {
		g.seedC[c.i], g.seedS[c.i] = c.v, max(c.v, 1-c.v)
	}
	far := tm.Farthest(l)
	qs := share(reps[0].Catch, l)
	var zeros []cand
	for i := 1; i < n; i++ {
		if reps[i].Cluster == far && g.seedS[i] == 0 {
			tds := share(reps[i].Catch, l)
			if qs > 0 {
				tds = min(tds/qs, 1)
			}
			zeros = append(zeros, cand{i, tds})
		}
	}
	sort.Slice(zeros, func(a, b int) bool {
		return zeros[a].v < zeros[b].v || (zeros[a].v == zeros[b].v && zeros[a].i < zeros[b].i)
	})
	for _, c := range zeros[:min(k, len(zeros))] {
		g.seedC[c.i], g.seedS[c.i] = c.v, max(c.v, 1-c.v)
	}
}

// Propagate runs the damped Jacobi updates and returns the label of every
// document node (index 0 is the query) and the iterations run. cfg is not
// checked here: give one New accepts (a model's own Config, or one with
// other propagation fields that New would accept), since NaN weights turn
// every label NaN.
func (g *Graph) Propagate(cfg Config) ([]float64, int) {
	cfg = cfg.withDefaults()
	const U = 0.5
	w := cfg.Damping
	step := func(old, upd float64) float64 { return old + w*(upd-old) }
	n, nf := len(g.nodes), len(g.fnodes)
	lab := make([]float64, n)
	flab := make([]float64, nf)
	for i := range lab {
		lab[i] = U
	}
	lab[0] = 1
	for f := range flab {
		flab[f] = U
	}
	next, fnext := make([]float64, n), make([]float64, nf)
	sum := make([]float64, n)
	rng := rand.New(rand.NewPCG(cfg.Seed, 3))
	const burnIn = 10
	averaged := 0
	// What the updates do not read from the labels, computed once, in the
	// order each update would sum it: a node's quadratic (its seed term
	// with the seed and without it, when dropout can drop it), its
	// constant part, and each edge's μnp·w, so that every iteration does
	// one product and one sum an edge, and the labels are the same bits.
	type term struct {
		to int
		w  float64 // μnp·w: b += w·label (a feature edge), b −= w·label (a distance edge)
	}
	type update struct {
		a, b   float64 // with the node's seed term
		a0, b0 float64 // without it (dropout)
		feat   []term
		dist   []term
	}
	// quad returns node i's a and constant b with seed strength s.
	quad := func(i int, s float64) (a, b float64) {
		a, b = s+cfg.MuPP, s*g.seedC[i]+cfg.MuPP*U
		for _, e := range g.feat[i] {
			a += cfg.MuNP * e.w
		}
		for _, d := range g.dist[i] {
			if d > 0 {
				a -= cfg.MuNP * d
			}
		}
		return a, b
	}
	ups := make([]update, n)
	for i := 1; i < n; i++ {
		u := &ups[i]
		u.a, u.b = quad(i, g.seedS[i])
		u.a0, u.b0 = quad(i, 0)
		u.feat = make([]term, len(g.feat[i]))
		for k, e := range g.feat[i] {
			u.feat[k] = term{e.to, cfg.MuNP * e.w}
		}
		for k, d := range g.dist[i] {
			if d > 0 {
				u.dist = append(u.dist, term{k, cfg.MuNP * d})
			}
		}
	}
	fa := make([]float64, nf)
	fw := make([][]term, nf)
	for f, es := range g.fnodes {
		a := cfg.MuPP
		fw[f] = make([]term, len(es))
		for k, e := range es {
			a += cfg.MuNP * e.w
			fw[f][k] = term{e.to, cfg.MuNP * e.w}
		}
		fa[f] = a
	}
	it := 0
	for it = 1; it <= cfg.MaxIter; it++ {
		delta := 0.0
		next[0] = 1
		for i := 1; i < n; i++ {
			u := &ups[i]
			a, b := u.a, u.b
			if g.seedS[i] > 0 && cfg.Dropout > 0 && rng.Float64() < cfg.Dropout {
				a, b = u.a0, u.b0
			}
			for _, e := range u.feat {
				b += e.w * flab[e.to]
			}
			for _, e := range u.dist {
				b -= e.w * lab[e.to]
			}
			next[i] = step(lab[i], boxMin(a, b))
			delta = max(delta, math.Abs(next[i]-lab[i]))
		}
		for f, es := range fw {
			b := cfg.MuPP * U
			for _, e := range es {
				b += e.w * lab[e.to]
			}
			fnext[f] = step(flab[f], boxMin(fa[f], b))
			delta = max(delta, math.Abs(fnext[f]-flab[f]))
		}
		lab, next = next, lab
		flab, fnext = fnext, flab
		if cfg.Dropout > 0 {
			if it > burnIn {
				for i, x := range lab {
					sum[i] += x
				}
				averaged++
			}
			continue
		}
		if delta < cfg.Tol {
			break
		}
	}
	if cfg.Dropout > 0 && averaged > 0 {
		for i := range lab {
			lab[i] = sum[i] / float64(averaged)
		}
	}
	return lab, min(it, cfg.MaxIter)
}

// boxMin minimises a·x² − 2·b·x over [0,1].
func boxMin(a, b float64) float64 {
	if a > 0 {
		return min(max(b/a, 0), 1)
	}
	if a-2*b < 0 {
		return 1
	}
	return 0
}

// Score returns one score per pool document: its propagated label when
// the subgraph reaches it, and otherwise a score below every label,
// ordered by WMD to the query.
func (m *Model) Score(ctx context.Context, query string, pool []string) ([]float64, error) {
	return m.ScoreFrom(ctx, query, pool, nil, nil)
}

// ScoreFrom is Score given the pool's IDs and the query's distances to
// the pool (see BuildFrom).
func (m *Model) ScoreFrom(ctx context.Context, query string, pool, ids []string, qdist []float64) ([]float64, error) {
	g, err := m.BuildFrom(ctx, query, pool, ids, qdist)
	if err != nil {
		return nil, err
	}
	return g.Scores(m.Config), nil
}

// Scores propagates labels on a built graph with cfg (which may differ
// from the building model's in its propagation fields, e.g. dropout) and
// returns one score per pool document, as Score does.
func (g *Graph) Scores(cfg Config) []float64 {
	lab, _ := g.Propagate(cfg)
	return g.LabelScores(lab)
}

// LabelScores turns the labels Propagate returned into one score per pool
// document, for callers that also want Propagate's iteration count.
func (g *Graph) LabelScores(lab []float64) []float64 {
	out := make([]float64, len(g.qdist))
	for i, d := range g.qdist {
		if math.IsInf(d, 1) {
			out[i] = -2
		} else {
			out[i] = -1 - d/(1+d) // in (−2, −1]: below every label in [0,1]
		}
	}
	for k, nd := range g.nodes[1:] {
		if nd.pool >= 0 {
			out[nd.pool] = lab[k+1]
		}
	}
	return out
}
