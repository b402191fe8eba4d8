package wmd

import (
	"context"
	"errors"
	"math"
	"sort"
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
	WCD, RWMD, ICT, WMD int
}

// Index is a fixed collection of documents to search by WMD.
type Index struct {
	space *Space
	docs  []Doc
}

// NewIndex returns an index over docs.
func (s *Space) NewIndex(docs []Doc) *Index { return &Index{space: s, docs: docs} }

// Len returns the number of documents.
func (x *Index) Len() int { return len(x.docs) }

// Doc returns document i.
func (x *Index) Doc(i int) Doc { return x.docs[i] }

// queryCosts computes word distances from a query's words, caching them
// per vocabulary id, so that the many documents of one search sharing a
// word pay for its distance once.
type queryCosts struct {
	space *Space
	q     Doc
	rows  [][]float64 // rows[k][v]: distance from query word k to vocabulary word v; NaN = not yet computed
	buf   []float64
}

// maxCacheEntries bounds the per-query cache (|q| × vocabulary size); a
// larger vocabulary computes distances directly.
const maxCacheEntries = 1 << 23

func newQueryCosts(s *Space, q Doc) *queryCosts {
	qc := &queryCosts{space: s, q: q}
	if len(q.Words)*s.vec.Len() <= maxCacheEntries {
		qc.rows = make([][]float64, len(q.Words))
		for k := range qc.rows {
			row := make([]float64, s.vec.Len())
			for v := range row {
				row[v] = math.NaN()
			}
			qc.rows[k] = row
		}
	}
	return qc
}

func (qc *queryCosts) costs(d Doc) []float64 {
	if qc.rows == nil {
		qc.buf = qc.space.Costs(qc.q, d, qc.buf)
		return qc.buf
	}
	m := len(d.Words)
	qc.buf = grow(qc.buf, len(qc.q.Words)*m)
	for k, qi := range qc.q.Words {
		row := qc.rows[k]
		out := qc.buf[k*m : k*m+m]
		for c, v := range d.Words {
			dist := row[v]
			if dist != dist { // NaN: not yet computed
				dist = qc.space.WordDistance(qi, v)
				row[v] = dist
			}
			out[c] = dist
		}
	}
	return qc.buf
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

// KNN returns the k documents nearest to q by exact WMD, nearest first, by
// prefetch and prune (Kusner et al., 2015): documents are sorted by WCD and
// the k nearest are solved exactly, giving a k-th distance b; every
// document whose WCD does not exceed b gets its RWMD, and where that does
// not exceed b either, the tighter ICT bound (see ict); those are then
// solved in increasing ICT until the bound exceeds the current k-th
// distance. Every bound is below WMD, so the result is exact.
func (x *Index) KNN(ctx context.Context, q Doc, k int, opt Options) ([]Neighbor, Stats, error) {
	var st Stats
	if k <= 0 {
		return nil, st, errors.New("wmd: k must be ≥ 1")
	}
	if q.Empty() {
		return nil, st, errors.New("wmd: query has no word with a vector")
	}
	type cand struct {
		doc   int
		bound float64
	}
	byBound := func(c []cand) {
		sort.Slice(c, func(a, b int) bool {
			if c[a].bound != c[b].bound {
				return c[a].bound < c[b].bound
			}
			return c[a].doc < c[b].doc
		})
	}
	cands := make([]cand, 0, len(x.docs))
	for i, d := range x.docs {
		if d.Empty() || (opt.Exclude != nil && opt.Exclude(i)) {
			continue
		}
		cands = append(cands, cand{i, x.space.WCD(q, d)})
		st.WCD++
	}
	byBound(cands)
	if opt.Prefetch > 0 && len(cands) > opt.Prefetch {
		cands = cands[:opt.Prefetch]
	}
	qc := newQueryCosts(x.space, q)
	sol := x.space.solvers.Get().(*Solver)
	defer x.space.solvers.Put(sol)
	top := topK{k: k}
	solve := func(doc int) error {
		d := x.docs[doc]
		dist, err := sol.Solve(q.Weights, d.Weights, qc.costs(d))
		if err != nil {
			return err
		}
		st.WMD++
		top.add(Neighbor{doc, dist})
		return nil
	}
	for _, c := range cands[:min(k, len(cands))] {
		if err := solve(c.doc); err != nil {
			return nil, st, err
		}
	}
	// Relaxed bounds for every document the WCD cannot rule out: RWMD,
	// then the tighter ICT where RWMD does not already rule it out.
	var rest []cand
	var used []bool
	for n, c := range cands[min(k, len(cands)):] {
		if n%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, st, err
			}
		}
		if c.bound > pruneSlack(top.bound()) {
			break // every later document has a larger WCD, hence a larger WMD
		}
		d := x.docs[c.doc]
		cost := qc.costs(d)
		lb := rwmd(q.Weights, d.Weights, cost)
		st.RWMD++
		if lb > pruneSlack(top.bound()) {
			continue
		}
		lb, used = ict(q.Weights, d.Weights, cost, used)
		st.ICT++
		rest = append(rest, cand{c.doc, lb})
	}
	byBound(rest)
	for n, c := range rest {
		if n%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, st, err
			}
		}
		if c.bound > pruneSlack(top.bound()) {
			break // every later document has a larger bound, hence a larger WMD
		}
		if err := solve(c.doc); err != nil {
			return nil, st, err
		}
	}
	return top.nb, st, nil
}

// Exhaustive returns the same neighbours as KNN by solving the transport
// problem for every document: the baseline KNN is measured against.
func (x *Index) Exhaustive(ctx context.Context, q Doc, k int, opt Options) ([]Neighbor, Stats, error) {
	var st Stats
	if k <= 0 {
		return nil, st, errors.New("wmd: k must be ≥ 1")
	}
	if q.Empty() {
		return nil, st, errors.New("wmd: query has no word with a vector")
	}
	qc := newQueryCosts(x.space, q)
	sol := x.space.solvers.Get().(*Solver)
	defer x.space.solvers.Put(sol)
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
		dist, err := sol.Solve(q.Weights, d.Weights, qc.costs(d))
		if err != nil {
			return nil, st, err
		}
		st.WMD++
		top.add(Neighbor{i, dist})
	}
	return top.nb, st, nil
}
