package wmd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
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
	// NoProjection turns off the bound on projected word vectors (see
	// proj.go), whose projected vocabulary an index otherwise builds at
	// its first search over most of it: for an index searched a few
	// times only, such as one query's candidates, building it costs more
	// than it saves.
	NoProjection bool
	// Pairs, when set, shares exact distances with the other searches of
	// this index that hold the same Pairs; the query must then be the
	// index's document Self (see Pairs).
	Pairs *Pairs
	Self  int
	// Floor, when set, is a lower bound on the WMD from the query to a
	// document known from elsewhere, such as the radius of a neighbour
	// list computed over a larger collection (see ssg.Neighbours): the
	// search starts each document (of the Prefetch, if set, nearest by
	// WCD) from the larger of it and the WCD, and never bounds or solves
	// one whose floor exceeds the k-th distance.
	Floor func(doc int) float64
}

// Pairs shares exact distances among searches of one Index whose queries
// are its own documents, such as the k-NN searches from each of a query
// graph's neighbours: WMD is symmetric, so each pair of documents is
// solved in one orientation, the lower-numbered document's words as the
// rows, whichever search meets it first, and a search that meets a pair
// already solved takes its distance without a bound or a solve. Every
// search returns the same neighbours and distances in whatever order the
// searches run. Safe for concurrent use; its memory grows with the pairs
// solved, so it should serve one batch of searches and be dropped.
type Pairs struct {
	mu   sync.Mutex
	dist map[[2]int32]float64
}

func pairKey(a, b int) [2]int32 {
	if a > b {
		a, b = b, a
	}
	return [2]int32{int32(a), int32(b)}
}

func (p *Pairs) get(a, b int) (float64, bool) {
	p.mu.Lock()
	d, ok := p.dist[pairKey(a, b)]
	p.mu.Unlock()
	return d, ok
}

// Put records d as the exact distance between documents a and b, for
// the searches sharing p to take without a solve: one a search solved, or
// one computed before the searches, such as one read off a neighbour list.
func (p *Pairs) Put(a, b int, d float64) {
	p.mu.Lock()
	if p.dist == nil {
		p.dist = map[[2]int32]float64{}
	}
	p.dist[pairKey(a, b)] = d
	p.mu.Unlock()
}

// Stats counts the work a search did.
type Stats struct {
	// WCD counts centroid distances; RWMD the documents whose full cost
	// matrix was bounded (the RWMD and dual bounds of dualBound, one pass
	// over the matrix each); ICT the ICT bounds computed (KNN no longer
	// computes them: the dual bound is tighter and cheaper); WMD the runs
	// of the exact solver, of which Abandoned stopped early once they had
	// proved the document farther than the k-th neighbour.
	WCD, RWMD, ICT, WMD, Abandoned int
	// Warm counts the documents ruled out, just before the solver, by the
	// dual bounds seeded with the neighbours' query potentials.
	Warm int
	// Projected counts the documents bounded on projected word vectors
	// before any full-dimension distance (see proj.go); RWMD then counts
	// those that needed the full cost matrix's bound as well.
	Projected int
	// Shared counts the distances read from Options.Pairs, solved by
	// another search.
	Shared int
}

// Index is a fixed collection of documents to search by WMD.
type Index struct {
	space *Space
	docs  []Doc

	once    sync.Once
	words   []int32 // the index's vocabulary: local id → vocabulary id
	idsOnce sync.Once
	ids     map[int32]int32 // and back (see localID)
	local   [][]int32       // each document's words as local ids
	weights [][]float64     // each document's weights (Doc.Weights, copied)

	centsOnce sync.Once
	cents     lanes // the documents' centroids, for KNN's WCD (see centroids)

	projOnce sync.Once
	proj     *projection // nil: no projection bound (see proj.go)
}

// NewIndex returns an index over docs.
func (s *Space) NewIndex(docs []Doc) *Index {
	return &Index{space: s, docs: docs}
}

// searches keeps the scratch space of searches ended, for the next over
// any index: a stage builds an index for each window it scores.
var searches = sync.Pool{New: func() any { return new(search) }}

// doc returns document d's local word ids and weights.
func (x *Index) doc(d int) ([]int32, []float64) { return x.local[d], x.weights[d] }

// Len returns the number of documents.
func (x *Index) Len() int { return len(x.docs) }

// Doc returns document i.
func (x *Index) Doc(i int) Doc { return x.docs[i] }

// vocabulary numbers the index's words and lays out every document's
// local word ids and weights back to back in two arrays (x.local and
// x.weights slice them), so that bounding a document touches a few
// adjacent cache lines rather than allocations scattered over the heap:
// the search bounds thousands of documents in no particular order.
func (x *Index) vocabulary() {
	total := 0
	for _, doc := range x.docs {
		total += len(doc.Words)
	}
	// local[w] is local id+1 of vocabulary word w while the index's
	// vocabulary is read, 0 for a word not met yet; cleared after.
	p := localIDs.Get().(*[]int32)
	if n := x.space.vec.Len(); cap(*p) < n {
		*p = make([]int32, n)
	}
	local := (*p)[:x.space.vec.Len()]
	flatIDs, flatW := make([]int32, 0, total), make([]float64, 0, total)
	x.local = make([][]int32, len(x.docs))
	x.weights = make([][]float64, len(x.docs))
	for d, doc := range x.docs {
		start := len(flatIDs)
		flatW = append(flatW, doc.Weights...)
		x.weights[d] = flatW[start:len(flatW):len(flatW)]
		for _, w := range doc.Words {
			id := local[w]
			if id == 0 {
				x.words = append(x.words, w)
				id = int32(len(x.words))
				local[w] = id
			}
			flatIDs = append(flatIDs, id-1)
		}
		x.local[d] = flatIDs[start:len(flatIDs):len(flatIDs)]
	}
	for _, w := range x.words {
		local[w] = 0
	}
	localIDs.Put(p)
}

// localIDs keeps vocabulary's dense maps from vocabulary words to an
// index's local ids: a map of its own for each index (a stage builds one
// for each window) took a fifteenth of a window's WMD.
var localIDs = sync.Pool{New: func() any { return new([]int32) }}

// localID returns the local id of vocabulary word w, and whether the
// index's documents hold it.
func (x *Index) localID(w int32) (int32, bool) {
	x.idsOnce.Do(func() {
		x.ids = make(map[int32]int32, len(x.words))
		for l, v := range x.words {
			x.ids[v] = int32(l)
		}
	})
	l, ok := x.ids[w]
	return l, ok
}

// centroids lays out the documents' centroids for WCD, which only KNN's
// prefetch reads: Distances, which solves every document it is given,
// does without them.
func (x *Index) centroids() {
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
// to the index's vocabulary, each computed once and shared by every
// document with that word, the cost matrix, the solver and the candidate
// lists.
type search struct {
	x      *Index
	q      Doc
	lanes  lanes // the query's word vectors
	stride int   // |q| rounded up to 4: the length of a row of dist
	// dist[w·stride+k] is the distance from local word w to query word k,
	// +Inf in the padding k ≥ |q| (never a row's minimum): rows of a
	// multiple of 4 values that the kernels of the bounds scan as they
	// are, with no gather.
	dist  []float64
	done  []bool          // the row of local word w is filled in
	rows  []atomic.Uint32 // Distances' row states (see fillRows)
	cost  []float64
	miss  []int32     // a document's words without distances yet
	cmin  []float64   // stride: column minima, then −Inf in the padding
	colB  []float64   // stride: the other side's column minima
	rowU  []float64   // one value per row of a bound's pass
	rowR  []float64   // and another
	warms []warmPot   // query potentials of the nearest documents solved
	spare [][]float64 // buffers for warms
	sol   Solver
	dual  dualBound
	wcd   []float64

	// The projection bound's cache (see proj.go), laid out as dist: the
	// projected distances from local word w to the query's words.
	proj   *projection // nil when this search does not use it
	plane  lanes       // the query's projected word vectors
	pq     []float64
	pr     []float64 // projection.apply's scratch
	pqs    [][]float64
	pdist  []float64
	margin float64 // see projection.slack

	cands  []cand
	sorted []cand // sortByBound's scratch
	heap   []cand
	k      int // the neighbours sought (keepWarm keeps 2k potentials)
}

// warmPot is the query potentials of an optimal plan of document doc
// (stride long, −Inf in the padding so that padded lanes never win a
// minimum).
type warmPot struct {
	doc  int
	dist float64
	u    []float64
}

// maxCacheEntries bounds the per-query distance cache (|q| × the index's
// vocabulary); beyond it, cost matrices are computed directly (and there
// is no projection bound). Tests lower it.
var maxCacheEntries = 1 << 23

func (x *Index) begin(q Doc) *search {
	x.once.Do(x.vocabulary)
	s := searches.Get().(*search)
	s.x, s.q = x, q
	s.lanes.setWords(x.space.vec, q.Words)
	nq := len(q.Words)
	s.stride = (nq + 3) &^ 3
	for _, p := range s.warms {
		s.spare = append(s.spare, p.u)
	}
	s.warms = s.warms[:0]
	s.proj = nil
	if nq*len(x.words) > maxCacheEntries {
		s.done = s.done[:0]
		return s
	}
	s.cmin, s.colB = grow(s.cmin, s.stride), grow(s.colB, s.stride)
	s.dist = grow(s.dist, s.stride*len(x.words))
	s.done = growBool(s.done, len(x.words))
	clear(s.done)
	return s
}

// useProjection turns on the projection bound for this search: projects
// the query's words and fills the projected distance cache.
func (s *search) useProjection(pr *projection) {
	s.proj = pr
	nq, p := len(s.q.Words), pr.width
	s.pq = grow(s.pq, nq*p)
	s.pr = grow(s.pr, pr.dim)
	s.pqs = s.pqs[:0]
	var qn float64
	for k, w := range s.q.Words {
		v := s.x.space.vec.Vector(int(w))
		if l, ok := s.x.localID(w); ok { // projected with the vocabulary
			copy(s.pq[k*p:k*p+p], pr.vecs[int(l)*p:int(l)*p+p])
		} else {
			pr.apply(v, s.pq[k*p:k*p+p], s.pr)
		}
		s.pqs = append(s.pqs, s.pq[k*p:k*p+p])
		qn = max(qn, math.Sqrt(dot(v, v)))
	}
	s.plane.set(s.pqs, p)
	s.margin = pr.slack(qn)
	nw := len(s.x.words)
	s.pdist = grow(s.pdist, s.stride*nw)
	// Every row now, in one sweep: a search that uses the projection
	// bounds most of the index, and the rows are cheap (p+1 dimensions),
	// so the sweep costs about what filling rows document by document
	// would, without checking for each document which rows it lacks.
	for w := int32(0); w < int32(nw); w++ {
		next := w + 1
		if next == int32(nw) {
			next = -1
		}
		s.pfill(w, next)
	}
}

// pfill is fill for the projected distances.
func (s *search) pfill(w, next int32) {
	p := s.proj.width
	row := s.pdist[int(w)*s.stride : int(w)*s.stride+s.stride]
	var nv []float64
	if next >= 0 {
		nv = s.proj.vecs[int(next)*p : int(next)*p+p]
	}
	s.plane.into(row, s.proj.vecs[int(w)*p:int(w)*p+p], nv)
	for k := len(s.q.Words); k < s.stride; k++ {
		row[k] = math.Inf(1)
	}
}

// pbound is bound on the projected distances, lowered by the rounding
// margin: a lower bound of WMD that needs no full-dimension distance.
func (s *search) pbound(doc int, cut float64) float64 {
	return s.dualRows(s.pdist, doc, cut+s.margin) - s.margin
}

func (x *Index) end(s *search) {
	s.x, s.q = nil, Doc{}
	searches.Put(s)
}

// fill computes the distances from local word w to every query word, as
// Space.Costs does (bit for bit), straight into w's row of the cache;
// next is the local word to be filled next, or −1.
func (s *search) fill(w, next int32) {
	s.fillRow(w, next)
	s.done[w] = true
}

// fillRow is fill without marking the row done: it writes only w's row,
// so goroutines may fill different rows at once.
func (s *search) fillRow(w, next int32) {
	nq := len(s.q.Words)
	id := s.x.words[w]
	row := s.dist[int(w)*s.stride : int(w)*s.stride+s.stride]
	var nv []float64
	if next >= 0 {
		nv = s.x.space.vec.Vector(int(s.x.words[next]))
	}
	s.lanes.into(row, s.x.space.vec.Vector(int(id)), nv)
	for k, qi := range s.q.Words {
		if qi == id {
			row[k] = 0
		}
	}
	for k := nq; k < s.stride; k++ {
		row[k] = math.Inf(1)
	}
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
	s.cost = s.costsInto(s.cost, doc)
	return s.cost
}

// costsInto is costs once the distances from every word of doc are in
// the cache, writing to buf (grown as needed and returned): it only reads
// the cache, so goroutines may call it at once.
func (s *search) costsInto(buf []float64, doc int) []float64 {
	nq, m := len(s.q.Words), len(s.x.local[doc])
	buf = grow(buf, nq*m)
	for c, w := range s.x.local[doc] {
		for k, v := range s.dist[int(w)*s.stride : int(w)*s.stride+nq] {
			buf[k*m+c] = v
		}
	}
	return buf
}

// costsT returns the cost matrix between document doc and the query,
// |d|×|q| row-major: costs transposed, straight from the cache's rows.
func (s *search) costsT(doc int) []float64 {
	d := s.x.docs[doc]
	if !s.words(doc) {
		s.cost = s.x.space.Costs(d, s.q, s.cost)
		return s.cost
	}
	nq, ids := len(s.q.Words), s.x.local[doc]
	s.cost = grow(s.cost, len(ids)*nq)
	for c, w := range ids {
		copy(s.cost[c*nq:c*nq+nq], s.dist[int(w)*s.stride:])
	}
	return s.cost
}

// bound returns the dual bound of document doc (see dualBound), computed
// on the rows of the distance cache, that is on the transposed cost
// matrix (document words × query words), with nothing to gather: one
// pass gives the row and column minima, so both sides of RWMD, and only
// when neither exceeds cut a second pass gives both sides of the dual
// step.
func (s *search) bound(doc int, cut float64) float64 {
	d := s.x.docs[doc]
	if !s.words(doc) {
		s.cost = s.x.space.Costs(d, s.q, s.cost)
		lb, _ := s.dual.bound(d.Weights, s.q.Weights, s.cost, cut)
		return lb
	}
	return s.dualRows(s.dist, doc, cut)
}

// dualRows is bound over the rows of dist (s.dist or s.pdist).
func (s *search) dualRows(dist []float64, doc int, cut float64) float64 {
	ids, wts := s.x.doc(doc)
	nq := len(s.q.Words)
	s.rowU, s.rowR = grow(s.rowU, len(ids)), grow(s.rowR, len(ids))
	cmin, rmin := s.cmin, s.rowR
	rowColMin(dist, s.stride, ids, rmin, cmin)
	// Every document word to its nearest query word, and every query word
	// to its nearest document word: the two sides of RWMD.
	var ra, rb float64
	for i, w := range wts {
		ra += w * rmin[i]
	}
	for k, w := range s.q.Weights {
		rb += w * cmin[k]
	}
	rwmd := max(ra, rb)
	if rwmd > cut {
		return rwmd
	}
	for k := nq; k < s.stride; k++ {
		cmin[k] = math.Inf(-1)
	}
	// A: v = column minima, u_i = min_k (c_ik − v_k) (rowU).
	// B: u = row minima, v_k = min_i (c_ik − u_i) (colB).
	rowsDual(dist, s.stride, ids, cmin, rmin, s.rowU, s.colB)
	lbA, lbB := rb, ra
	for i, w := range wts {
		lbA += w * s.rowU[i]
	}
	for k, w := range s.q.Weights {
		lbB += w * s.colB[k]
	}
	return max(lbA, lbB, rwmd)
}

// warm returns the largest of the warm bounds (see dualBound.warm) of
// document doc seeded with the query potentials of the documents solved
// so far (s.warms: the 2k nearest), nearest first, stopping at the first
// that exceeds cut: one pass over the rows each. Other documents near the
// query tend to ship the query's mass the same way, so some solved
// document's potentials often come close to this one's own; on the
// SemEval pairs the potentials of the 2k nearest solved rule out about
// three times as many of the documents that reach this point as the
// nearest neighbour's alone, each for a few percent of a solve.
func (s *search) warm(doc int, cut float64) float64 {
	best := math.Inf(-1)
	if len(s.warms) == 0 {
		return best
	}
	d := s.x.docs[doc]
	if !s.words(doc) {
		cost, nq := s.costs(doc), len(s.q.Words)
		for _, p := range s.warms {
			if best = max(best, s.dual.warm(s.q.Weights, d.Weights, cost, p.u[:nq])); best > cut {
				break
			}
		}
		return best
	}
	return s.warmRows(s.dist, doc, cut)
}

// warmRows is warm over the rows of dist (s.dist or s.pdist).
func (s *search) warmRows(dist []float64, doc int, cut float64) float64 {
	best := math.Inf(-1)
	ids, wts := s.x.doc(doc)
	s.rowU = grow(s.rowU, len(ids))
	for _, p := range s.warms {
		// v_i = min_k (c_ik − u_k), then ũ_k = min_i (c_ik − v_i).
		rowsDual(dist, s.stride, ids, p.u, nil, s.rowU, s.colB)
		var lb float64
		for i, w := range wts {
			lb += w * s.rowU[i]
		}
		for k, w := range s.q.Weights {
			lb += w * s.colB[k]
		}
		if best = max(best, lb); best > cut {
			break
		}
	}
	return best
}

// keepWarm records the query potentials pot of the optimal plan just
// solved for document doc, at distance dist, keeping s.warms sorted by
// distance and at most 2k long (the farthest go, their buffers to
// s.spare): past that, more potentials cost more passes than they rule
// documents out.
func (s *search) keepWarm(doc int, dist float64, k int, pot []float64) {
	var u []float64
	if n := len(s.spare); n > 0 {
		u, s.spare = s.spare[n-1], s.spare[:n-1]
	}
	nq := len(s.q.Words)
	u = grow(u, s.stride)
	copy(u, pot[:nq])
	for k := nq; k < s.stride; k++ {
		u[k] = math.Inf(-1)
	}
	i := sort.Search(len(s.warms), func(i int) bool { return s.warms[i].dist > dist })
	s.warms = slices.Insert(s.warms, i, warmPot{doc, dist, u})
	if limit := 2 * k; len(s.warms) > limit {
		s.spare = append(s.spare, s.warms[limit].u)
		s.warms = s.warms[:limit]
	}
}

// cand is a document and a lower bound of its distance.
type cand struct {
	doc   int
	bound float64
	level uint8 // how bound was computed: byWCD, byProjection, byDual, byWarm or byKnown
}

// The bounds a candidate goes through, in order; byKnown is an exact
// distance another search solved (Options.Pairs).
const (
	byWCD = iota
	byProjection
	byDual
	byWarm
	byKnown
)

// sortByBound sorts cs by bound, then document, returning the sorted
// slice and the other buffer (tmp, grown as needed) for reuse. The bounds
// are WCDs: non-negative, so their IEEE bits order as they do, and cs is
// in document order, so a stable LSD radix sort on the bits, a byte per
// pass, skipping bytes all keys share, sorts by (bound, document) in a few
// linear passes; a comparison sort spent more time here than the WCDs.
// Only the high half of the bits goes through the radix passes, an
// insertion sort finishing what they leave.
func sortByBound(cs, tmp []cand) ([]cand, []cand) {
	if cap(tmp) < len(cs) {
		tmp = make([]cand, len(cs))
	}
	tmp = tmp[:len(cs)]
	for i, c := range cs {
		if !(c.bound >= 0) || (i > 0 && cs[i-1].doc >= c.doc) {
			// Not the case the radix sort relies on.
			slices.SortFunc(cs, func(a, b cand) int {
				if candLess(a, b) {
					return -1
				}
				if candLess(b, a) {
					return 1
				}
				return 0
			})
			return cs, tmp
		}
	}
	var and, or uint64 = ^uint64(0), 0
	for _, c := range cs {
		b := boundKey(c.bound)
		and &= b
		or |= b
	}
	// The high 32 bits (sign, exponent, 20 bits of mantissa) by radix,
	// then insertion sort: keys equal there are rare, so it has little
	// left to do.
	for shift := uint(32); shift < 64; shift += 8 {
		if (and>>shift)&0xff == (or>>shift)&0xff {
			continue // every key has the same byte here
		}
		var count [257]int
		for _, c := range cs {
			count[(boundKey(c.bound)>>shift)&0xff+1]++
		}
		for i := 1; i < 257; i++ {
			count[i] += count[i-1]
		}
		for _, c := range cs {
			d := (boundKey(c.bound) >> shift) & 0xff
			tmp[count[d]] = c
			count[d]++
		}
		cs, tmp = tmp, cs
	}
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && candLess(cs[j], cs[j-1]); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
	return cs, tmp
}

// boundKey is the bits of a non-negative bound, −0 as +0.
func boundKey(b float64) uint64 {
	if b == 0 {
		return 0
	}
	return math.Float64bits(b)
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
// by best-first search over increasingly tight lower bounds. Every
// document starts with its WCD; the document of smallest bound is taken
// next and, while its bound does not exceed the current k-th distance,
// moves one step along: WCD → the dual bound on projected word vectors
// (see proj.go; searches of most of an index with long vectors) → the
// dual bound on its full cost matrix (see dualBound) → the warm bounds
// seeded with the query potentials of the neighbours solved so far (see
// search.warm) → the exact solver with the k-th distance as cutoff (see
// Solver.SolveCutoff), which discards it as soon as the solver's own dual
// bound exceeds the cutoff. After each step the document goes back into
// the queue under its new bound, so each costlier step is taken only for
// documents still in reach, and documents are solved in the order of
// their tightest bounds, which brings the k-th distance down early.
// Every bound is below WMD (the projected ones by a rounding margin), so
// the result is exact: the same neighbours and distances as Exhaustive.
func (x *Index) KNN(ctx context.Context, q Doc, k int, opt Options) ([]Neighbor, Stats, error) {
	var st Stats
	if err := checkSearch(q, k); err != nil {
		return nil, st, err
	}
	s := x.begin(q)
	defer x.end(s)
	s.k = k
	if len(s.done) > 0 && !opt.NoProjection && (opt.Prefetch <= 0 || 2*opt.Prefetch >= len(x.docs)) {
		// A search over most of the index: worth the projected
		// vocabulary (built once per index).
		if x.projOnce.Do(x.project); x.proj != nil {
			s.useProjection(x.proj)
		}
	}
	self := -1
	if opt.Pairs != nil {
		if opt.Self < 0 || opt.Self >= len(x.docs) {
			return nil, st, fmt.Errorf("wmd: search from document %d of %d", opt.Self, len(x.docs))
		}
		self = opt.Self
	}
	x.centsOnce.Do(x.centroids)
	s.wcd = x.cents.into(s.wcd, q.Centroid, nil)
	cands := s.cands[:0]
	for i, d := range x.docs {
		if d.Empty() || (opt.Exclude != nil && opt.Exclude(i)) {
			continue
		}
		cands = append(cands, cand{doc: i, bound: s.wcd[i]})
	}
	st.WCD = len(cands)
	s.cands, s.sorted = sortByBound(cands, s.sorted)
	cands = s.cands
	if opt.Prefetch > 0 && len(cands) > opt.Prefetch {
		cands = cands[:opt.Prefetch]
	}
	if opt.Floor != nil {
		// After the prefetch, which stays the WCD's choice.
		for i := range cands {
			cands[i].bound = max(cands[i].bound, opt.Floor(cands[i].doc))
		}
		s.cands, s.sorted = sortByBound(cands, s.sorted)
		cands = s.cands
	}
	s.heap = s.heap[:0]
	top := topK{k: k}
	next := 0 // cands[next:] have only their WCD (or floor)
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
				next = len(cands) // every later one's is larger
				continue
			}
			if self >= 0 {
				if d, ok := opt.Pairs.get(self, c.doc); ok {
					st.Shared++
					if d <= cut {
						s.push(cand{c.doc, d, byKnown})
					}
					continue
				}
			}
			var lb float64
			level := uint8(byProjection)
			if s.proj == nil {
				lb, level = s.bound(c.doc, cut), byDual
				st.RWMD++
			} else {
				lb = s.pbound(c.doc, cut)
				st.Projected++
			}
			if lb = max(lb, c.bound); lb <= cut {
				s.push(cand{c.doc, lb, level})
			}
			continue
		}
		if len(s.heap) == 0 || s.heap[0].bound > cut {
			break // every bound left exceeds the k-th distance
		}
		c := s.pop()
		switch c.level {
		case byKnown:
			top.add(Neighbor{c.doc, c.bound})
			continue
		case byProjection:
			lb := s.bound(c.doc, cut)
			st.RWMD++
			if lb = max(lb, c.bound); lb <= cut {
				s.push(cand{c.doc, lb, byDual})
			}
			continue
		case byDual:
			lb := s.warm(c.doc, cut)
			if lb > cut {
				st.Warm++
				continue
			}
			if lb > c.bound {
				// Back in line by the tighter bound: documents are solved
				// in the order of their warm bounds, which follow WMD more
				// closely than the dual bound does, so fewer are solved in
				// full only to be pushed out of the k nearest later.
				s.push(cand{c.doc, lb, byWarm})
				continue
			}
		}
		dist, exact, err := s.solve(c.doc, self, cut, opt.Pairs, &st)
		if err != nil {
			return nil, st, err
		}
		if exact {
			top.add(Neighbor{c.doc, dist})
		}
	}
	return top.nb, st, nil
}

// solve returns the WMD from the query to document doc, or a bound above
// cut (exact false) once the solver proves it farther. With pairs (self ≥
// 0, the query being document self) the pair is solved with the
// lower-numbered document's words as rows, and read from or written to
// pairs.
func (s *search) solve(doc, self int, cut float64, pairs *Pairs, st *Stats) (float64, bool, error) {
	if self >= 0 {
		if d, ok := pairs.get(self, doc); ok {
			st.Shared++
			return d, true, nil
		}
	}
	q, d := s.q, s.x.docs[doc]
	nq := len(q.Words)
	var (
		dist  float64
		exact bool
		err   error
		pot   []float64
	)
	if doc < self {
		dist, exact, err = s.sol.SolveCutoff(d.Weights, q.Weights, s.costsT(doc), cut)
		pot = s.sol.sx.pi[len(d.Words):]
	} else {
		dist, exact, err = s.sol.SolveCutoff(q.Weights, d.Weights, s.costs(doc), cut)
		pot = s.sol.sx.pi[:nq]
	}
	if err != nil {
		return 0, false, err
	}
	st.WMD++
	if !exact {
		st.Abandoned++
		return dist, false, nil
	}
	if self >= 0 {
		pairs.Put(self, doc, dist)
	}
	if s.sol.byPivots {
		s.keepWarm(doc, dist, s.k, pot)
	}
	return dist, true, nil
}

// checkSearch refuses what KNN and Exhaustive cannot search for: no
// neighbour, or a query none of whose words has a vector.
func checkSearch(q Doc, k int) error {
	if k <= 0 {
		return errors.New("wmd: k must be ≥ 1")
	}
	if q.Empty() {
		return errors.New("wmd: query has no word with a vector")
	}
	return nil
}

// Exhaustive returns the same neighbours as KNN by solving the transport
// problem for every document, with the same cost matrices and solver: the
// baseline KNN is measured against.
func (x *Index) Exhaustive(ctx context.Context, q Doc, k int, opt Options) ([]Neighbor, Stats, error) {
	var st Stats
	if err := checkSearch(q, k); err != nil {
		return nil, st, err
	}
	s := x.begin(q)
	defer x.end(s)
	top := topK{k: k}
	for i, d := range x.docs {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, st, err
			}
		}
		if d.Empty() || (opt.Exclude != nil && opt.Exclude(i)) {
			continue
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
