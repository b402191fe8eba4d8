package wmd

import (
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"sync"
)

// Neighbor is one search result: a document's index and its WMD.
type Neighbor struct {
	Doc  int
	Dist float64
}

// Options tune KNN.
type Options struct {
	// Prefetch, when > 0, considers only the Prefetch documents nearest by
	// WCD (Kusner et al.'s m); the result is then approximate.
	Prefetch int
	// Exclude, when set, skips the documents it reports true for.
	Exclude func(doc int) bool
}

// Stats counts the work a search did.
type Stats struct {
	// WCD counts centroid distances; RWMD the documents whose cost matrix
	// was built and bounded (the RWMD and dual bounds of dualBound, one
	// pass over the matrix each); ICT the ICT bounds computed (KNN no
	// longer computes them: the dual bound is tighter and cheaper); WMD
	// the runs of the exact solver, of which Abandoned stopped early once
	// they had proved the document farther than the k-th neighbour.
	WCD, RWMD, ICT, WMD, Abandoned int
	// Warm counts the documents ruled out, just before the solver, by the
	// dual bound seeded with the nearest neighbour's query potentials.
	Warm int
}

// Index is a fixed collection of documents to search by WMD.
type Index struct {
	space *Space
	docs  []Doc

	once   sync.Once
	words  []int32   // the index's vocabulary: local id → vocabulary id
	local  [][]int32 // each document's words as local ids
	cents  lanes     // the documents' centroids, for WCD
	search sync.Pool // *search
}

// NewIndex returns an index over docs.
func (s *Space) NewIndex(docs []Doc) *Index {
	x := &Index{space: s, docs: docs}
	x.search.New = func() any { return new(search) }
	return x
}

// Len returns the number of documents.
func (x *Index) Len() int { return len(x.docs) }

// Doc returns document i.
func (x *Index) Doc(i int) Doc { return x.docs[i] }

func (x *Index) vocabulary() {
	ids := map[int32]int32{}
	x.local = make([][]int32, len(x.docs))
	for d, doc := range x.docs {
		l := make([]int32, len(doc.Words))
		for k, w := range doc.Words {
			id, ok := ids[w]
			if !ok {
				id = int32(len(x.words))
				ids[w] = id
				x.words = append(x.words, w)
			}
			l[k] = id
		}
		x.local[d] = l
	}
	dim := x.space.vec.Dim
	cs := make([][]float64, len(x.docs))
	var zero []float64
	for d, doc := range x.docs {
		cs[d] = doc.Centroid
		if len(cs[d]) < dim { // an empty document (never searched)
			if zero == nil {
				zero = make([]float64, dim)
			}
			cs[d] = zero
		}
	}
	x.cents.set(cs, dim)
}

// search is one query's scratch space: the word distances from the query
// to the index's vocabulary, computed when a document first needs them
// and shared by every document with that word, the cost matrix, the
// solver and the candidate lists.
type search struct {
	x     *Index
	q     Doc
	lanes lanes     // the query's word vectors
	dist  []float64 // dist[w·|q|+k]: local word w to query word k
	done  []bool    // dist of local word w is filled in
	cost  []float64
	miss  []int32 // a document's words without distances yet
	rows  [][]float64
	warmU []float64 // the nearest neighbour's query potentials
	sol   Solver
	dual  dualBound
	wcd   []float64
	cands []cand
	heap  []cand
}

// maxCacheEntries bounds the per-query distance cache (|q| × the index's
// vocabulary); beyond it, cost matrices are computed directly.
const maxCacheEntries = 1 << 23

func (x *Index) begin(q Doc) *search {
	x.once.Do(x.vocabulary)
	s := x.search.Get().(*search)
	s.x, s.q = x, q
	s.lanes.setWords(x.space.vec, q.Words)
	if len(q.Words)*len(x.words) <= maxCacheEntries {
		s.dist = grow(s.dist, len(q.Words)*len(x.words))
		s.done = growBool(s.done, len(x.words))
		clear(s.done)
	} else {
		s.done = s.done[:0]
	}
	return s
}

func (x *Index) end(s *search) {
	s.x, s.q = nil, Doc{}
	x.search.Put(s)
}

// fill computes the distances from local word w to every query word, as
// Space.Costs does (bit for bit); next is the local word to be filled
// next, or −1.
func (s *search) fill(w, next int32) {
	nq := len(s.q.Words)
	id := s.x.words[w]
	col := s.dist[int(w)*nq : int(w)*nq+nq]
	var nv []float64
	if next >= 0 {
		nv = s.x.space.vec.Vector(int(s.x.words[next]))
	}
	copy(col, s.lanes.fromNext(s.x.space.vec.Vector(int(id)), nv))
	for k, qi := range s.q.Words {
		if qi == id {
			col[k] = 0
		}
	}
	s.done[w] = true
}

// words makes sure the distances from every word of document doc to the
// query are known. It reports false where the cache is off (too large).
func (s *search) words(doc int) bool {
	if len(s.done) == 0 {
		return false
	}
	miss := s.miss[:0]
	for _, w := range s.x.local[doc] {
		if !s.done[w] {
			miss = append(miss, w)
		}
	}
	for k, w := range miss {
		next := int32(-1)
		if k+1 < len(miss) {
			next = miss[k+1]
		}
		s.fill(w, next)
	}
	s.miss = miss
	return true
}

// costs returns the cost matrix between the query and document doc,
// |q|×|d| row-major.
func (s *search) costs(doc int) []float64 {
	d := s.x.docs[doc]
	if !s.words(doc) {
		s.cost = s.x.space.Costs(s.q, d, s.cost)
		return s.cost
	}
	nq, m := len(s.q.Words), len(d.Words)
	s.cost = grow(s.cost, nq*m)
	for c, w := range s.x.local[doc] {
		for k, v := range s.dist[int(w)*nq : int(w)*nq+nq] {
			s.cost[k*m+c] = v
		}
	}
	return s.cost
}

// bound returns the dual bound (see dualBound) of document doc, computed
// on the transposed cost matrix, whose rows are the cache's columns as
// they are: nothing to gather.
func (s *search) bound(doc int, cut float64) float64 {
	d := s.x.docs[doc]
	if !s.words(doc) {
		s.cost = s.x.space.Costs(d, s.q, s.cost)
		lb, _ := s.dual.bound(d.Weights, s.q.Weights, s.cost, cut)
		return lb
	}
	nq := len(s.q.Words)
	rows := s.rows[:0]
	for _, w := range s.x.local[doc] {
		rows = append(rows, s.dist[int(w)*nq:int(w)*nq+nq])
	}
	s.rows = rows
	lb, _ := s.dual.boundRows(d.Weights, s.q.Weights, rows, cut)
	return lb
}

// cand is a document and a lower bound of its distance.
type cand struct {
	doc   int
	bound float64
}

func candLess(a, b cand) bool {
	if a.bound != b.bound {
		return a.bound < b.bound
	}
	return a.doc < b.doc
}

func (s *search) push(c cand) {
	h := append(s.heap, c)
	for k := len(h) - 1; k > 0; {
		p := (k - 1) / 2
		if !candLess(h[k], h[p]) {
			break
		}
		h[k], h[p] = h[p], h[k]
		k = p
	}
	s.heap = h
}

func (s *search) pop() cand {
	h := s.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for k := 0; ; {
		l, r, m := 2*k+1, 2*k+2, k
		if l < len(h) && candLess(h[l], h[m]) {
			m = l
		}
		if r < len(h) && candLess(h[r], h[m]) {
			m = r
		}
		if m == k {
			break
		}
		h[k], h[m] = h[m], h[k]
		k = m
	}
	s.heap = h
	return top
}

// topK keeps the k smallest (distance, index) pairs seen so far.
type topK struct {
	k  int
	nb []Neighbor
}

func less(a, b Neighbor) bool {
	if a.Dist != b.Dist {
		return a.Dist < b.Dist
	}
	return a.Doc < b.Doc
}

func (t *topK) add(n Neighbor) {
	if len(t.nb) == t.k && !less(n, t.nb[t.k-1]) {
		return
	}
	i := sort.Search(len(t.nb), func(i int) bool { return less(n, t.nb[i]) })
	if len(t.nb) < t.k {
		t.nb = append(t.nb, Neighbor{})
	}
	copy(t.nb[i+1:], t.nb[i:])
	t.nb[i] = n
}

// bound is the k-th distance so far, +Inf until k documents are in.
func (t *topK) bound() float64 {
	if len(t.nb) < t.k {
		return math.Inf(1)
	}
	return t.nb[t.k-1].Dist
}

// pruneSlack absorbs rounding: a lower bound must exceed the k-th distance
// by more than this before a document is ruled out, so that rounding in
// the bounds never drops a true neighbour.
func pruneSlack(d float64) float64 { return d + 1e-9*(1+d) }

// KNN returns the k documents nearest to q by exact WMD, nearest first,
// by best-first search over increasingly tight lower bounds: every
// document starts with its WCD; the document of smallest bound is taken
// next, and, while its bound does not exceed the current k-th distance,
// either gets its cost matrix and dual bound (see dualBound) if it had
// only its WCD, or is solved with the k-th distance as cutoff (see
// Solver.SolveCutoff), which discards it as soon as the solver's own dual
// bound exceeds the cutoff. Before the solver, the dual bound seeded with
// the query potentials of the nearest neighbour so far (dualBound.warm)
// gets one more chance to rule the document out. Solving the most promising documents first
// brings the k-th distance down early, so later documents are discarded
// by their cheaper bounds. Every bound is below WMD, so the result is
// exact: the same neighbours and distances as Exhaustive.
func (x *Index) KNN(ctx context.Context, q Doc, k int, opt Options) ([]Neighbor, Stats, error) {
	var st Stats
	if k <= 0 {
		return nil, st, errors.New("wmd: k must be ≥ 1")
	}
	if q.Empty() {
		return nil, st, errors.New("wmd: query has no word with a vector")
	}
	s := x.begin(q)
	defer x.end(s)
	s.wcd = x.cents.into(s.wcd, q.Centroid, nil)
	cands := s.cands[:0]
	for i, d := range x.docs {
		if d.Empty() || (opt.Exclude != nil && opt.Exclude(i)) {
			continue
		}
		cands = append(cands, cand{i, s.wcd[i]})
	}
	st.WCD = len(cands)
	slices.SortFunc(cands, func(a, b cand) int {
		if candLess(a, b) {
			return -1
		}
		if candLess(b, a) {
			return 1
		}
		return 0
	})
	s.cands = cands
	if opt.Prefetch > 0 && len(cands) > opt.Prefetch {
		cands = cands[:opt.Prefetch]
	}
	s.heap = s.heap[:0]
	top := topK{k: k}
	warm := false
	next := 0 // cands[next:] have only their WCD
	for n := 0; ; n++ {
		if n%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, st, err
			}
		}
		cut := pruneSlack(top.bound())
		if next < len(cands) && (len(s.heap) == 0 || candLess(cands[next], s.heap[0])) {
			c := cands[next]
			next++
			if c.bound > cut {
				next = len(cands) // every later WCD is larger
				continue
			}
			lb := s.bound(c.doc, cut)
			st.RWMD++
			if lb = max(lb, c.bound); lb <= cut {
				s.push(cand{c.doc, lb})
			}
			continue
		}
		if len(s.heap) == 0 || s.heap[0].bound > cut {
			break // every bound left exceeds the k-th distance
		}
		c := s.pop()
		d := x.docs[c.doc]
		cost := s.costs(c.doc)
		if warm && s.dual.warm(q.Weights, d.Weights, cost, s.warmU) > cut {
			st.Warm++
			continue
		}
		dist, exact, err := s.sol.SolveCutoff(q.Weights, d.Weights, cost, cut)
		if err != nil {
			return nil, st, err
		}
		st.WMD++
		if !exact {
			st.Abandoned++
			continue
		}
		top.add(Neighbor{c.doc, dist})
		if top.nb[0].Doc == c.doc && s.sol.byPivots {
			// The nearest so far: its query potentials seed the warm bound.
			s.warmU = append(s.warmU[:0], s.sol.sx.pi[:len(q.Words)]...)
			warm = true
		}
	}
	return top.nb, st, nil
}

// Exhaustive returns the same neighbours as KNN by solving the transport
// problem for every document, with the same cost matrices and solver: the
// baseline KNN is measured against.
func (x *Index) Exhaustive(ctx context.Context, q Doc, k int, opt Options) ([]Neighbor, Stats, error) {
	var st Stats
	if k <= 0 {
		return nil, st, errors.New("wmd: k must be ≥ 1")
	}
	if q.Empty() {
		return nil, st, errors.New("wmd: query has no word with a vector")
	}
	s := x.begin(q)
	defer x.end(s)
	top := topK{k: k}
	for i, d := range x.docs {
		if d.Empty() || (opt.Exclude != nil && opt.Exclude(i)) {
			continue
		}
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, st, err
			}
		}
		dist, err := s.sol.Solve(q.Weights, d.Weights, s.costs(i))
		if err != nil {
			return nil, st, err
		}
		st.WMD++
		top.add(Neighbor{i, dist})
	}
	return top.nb, st, nil
}
