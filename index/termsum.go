package index

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/scorer"
	"github.com/blevesearch/bleve/v2/search/searcher"
	bindex "github.com/blevesearch/bleve_index_api"
)

// SumTerms makes Search score the queries a text search sends (a match
// query, a disjunction of match and term queries, nested) term at a time
// (see sumQuery) rather than with Bleve's disjunction searchers. false
// leaves every search to Bleve's searchers.
var SumTerms = true

// sumWindow is how many document numbers sumSearcher scores at once: its
// accumulators stay in the processor's cache, and their memory is bounded
// whatever the index's size.
const sumWindow = 4096

// sumChunk is how many document numbers a window holds, at most
// sumWindow; tests set fewer, to score many windows over a small index.
var sumChunk uint64 = sumWindow

// sumQuery is a query whose searcher scores its Query term at a time
// where Query is a tree of disjunctions over terms: a match query (its
// operator or, no fuzziness), a disjunction (min at most 1) of such
// queries, term queries and disjunctions. It is only ever the top of a
// request's query. Bleve's disjunction searchers score document at a
// time, keeping every term's postings in a heap ordered by document and
// allocating a match for each posting; most of a long query's search goes
// there. sumSearcher instead adds each term's postings into
// accumulators a window of document numbers at a time, computing every
// score as Bleve's term and disjunction scorers do (the same idf, query
// norm, term score and coordination factor), and passes on, in document
// order, only the hits that rank among the collector's keep.
// A disjunction's terms are added in the order Bleve's disjunction over
// ten terms or fewer adds them; over more, Bleve's order depends on its
// heap's path to each document, so scores may differ from Bleve's in
// their last bits, as a split search's may (see StableScore).
type sumQuery struct {
	query.Query
	keep  int  // the collector's From+Size
	split bool // whether it may score on two cores

	sum *sumSearcher // set when the searcher sums terms
}

// Searcher returns a sumSearcher over r where q.Query is a tree of
// disjunctions over terms and r a scorch snapshot, else q.Query's own.
func (q *sumQuery) Searcher(ctx context.Context, r bindex.IndexReader, m mapping.IndexMapping, o search.SearcherOptions) (search.Searcher, error) {
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok || o.Explain || o.IncludeTermVectors || o.Score == "none" || q.sum != nil || !summable(q.Query) {
		return q.Query.Searcher(ctx, r, m, o)
	}
	for _, k := range []any{search.BM25StatsKey, search.FieldTermSynonymMapKey, search.IncludeScoreBreakdownKey} {
		if ctx.Value(k) != nil {
			return q.Query.Searcher(ctx, r, m, o)
		}
	}
	top, view := q.Query, r
	if v, ok := top.(ReadsThrough); ok {
		top, view = v.SplitsAs(), v.View(r)
	}
	model := bindex.DefaultScoringModel
	if f, ok := ctx.Value(search.GetScoringModelCallbackKey).(search.GetScoringModelCallbackFn); ok {
		model = f()
	}
	b := sumBuilder{ctx: ctx, r: view, m: m, model: model}
	t, ok, err := b.tree(top)
	if err != nil {
		return nil, err
	}
	if !ok {
		return q.Query.Searcher(ctx, r, m, o)
	}
	q.sum = &sumSearcher{ctx: ctx, trees: []*sumTree{t}, keep: q.keep}
	if q.split && t.root.count() >= MinSplitPostings && docNumbers(snap) > sumChunk {
		// A second tree over its own postings readers scores every
		// other window.
		b2 := sumBuilder{ctx: ctx, r: view, m: m, model: model}
		t2, ok, err := b2.tree(top)
		if err != nil {
			q.sum.Close()
			q.sum = nil
			return nil, err
		}
		if ok {
			q.sum.trees = append(q.sum.trees, t2)
		}
	}
	return q.sum, nil
}

// docNumbers is how many document numbers snap's segments span.
func docNumbers(snap *scorch.IndexSnapshot) uint64 {
	var n uint64
	for _, s := range snap.Segments() {
		n += uint64(s.FullSize())
	}
	return n
}

// tree builds q's tree, its query norm set, or reports false (having
// closed what it opened) where q cannot be summed.
func (b *sumBuilder) tree(q query.Query) (*sumTree, bool, error) {
	root, ok, err := b.node(q)
	if err != nil || !ok || root.leaf != nil {
		closeLeaves(b.leaves)
		return nil, false, err
	}
	root.setQueryNorm(1 / math.Sqrt(root.weight()))
	return &sumTree{root: root, leaves: b.leaves}, true, nil
}

// maxSumNodes is the most disjunctions (match queries among them) a
// query sumQuery scores may hold: each holds its accumulators while the
// search runs.
const maxSumNodes = 64

// summable reports whether q is a tree of disjunctions over terms that
// sumQuery scores: built only of match queries with the or operator and
// no fuzziness, disjunctions that need at most one match, and, below a
// disjunction, term queries; maxSumNodes disjunctions at most; or a
// ReadsThrough query over such a tree.
func summable(q query.Query) bool {
	if v, ok := q.(ReadsThrough); ok {
		q = v.SplitsAs()
	}
	nodes := 0
	return summableCounting(q, &nodes)
}

// summableCounting is summable, counting q's disjunctions in nodes.
func summableCounting(q query.Query, nodes *int) bool {
	if *nodes++; *nodes > maxSumNodes {
		return false
	}
	switch q := q.(type) {
	case *query.MatchQuery:
		return q.Operator == query.MatchQueryOperatorOr && q.Fuzziness == 0 && !unexportedBool(q, "autoFuzzy")
	case *query.DisjunctionQuery:
		if int(q.Min) > 1 || len(q.Disjuncts) == 0 || unexportedBool(q, "retrieveScoreBreakdown") || tooMany(len(q.Disjuncts)) {
			return false
		}
		for _, d := range q.Disjuncts {
			if _, term := d.(*query.TermQuery); !term && !summableCounting(d, nodes) {
				return false
			}
		}
		return true
	}
	return false
}

// unexportedBool reads q's unexported bool field name, true (so that the
// query is left to Bleve) where this build of Bleve has no such field.
func unexportedBool(q any, name string) bool {
	f := reflect.ValueOf(q).Elem().FieldByName(name)
	return !f.IsValid() || f.Kind() != reflect.Bool || f.Bool()
}

// tooMany reports whether a disjunction of n clauses is over Bleve's
// limit, which Bleve's own searcher reports.
func tooMany(n int) bool {
	return searcher.DisjunctionMaxClauseCount != 0 && n > searcher.DisjunctionMaxClauseCount
}

// sumNode is a disjunction of the tree sumSearcher scores, or one of its
// terms (leaf set).
type sumNode struct {
	leaf *sumLeaf
	kids []*sumNode // in the order Bleve adds their scores

	*sumAcc // a disjunction's
}

// sumAcc is a disjunction's accumulators over the window being scored:
// each document's sum of its matching kids' scores and their number, and
// which documents any kid matched. They are left cleared after each
// window, and kept for the next search in accs.
type sumAcc struct {
	sum  [sumWindow]float64
	n    [sumWindow]int32
	seen [sumWindow / 64]uint64
}

var accs = sync.Pool{New: func() any { return new(sumAcc) }}

// sumLeaf is a term: its postings and its score's factors, as Bleve's
// TermQueryScorer computes them.
type sumLeaf struct {
	r      bindex.TermFieldReader
	tfd    bindex.TermFieldDoc
	id     bindex.IndexInternalID // Advance's argument
	at     uint64                 // the document number of the current posting
	done   bool                   // no posting left
	count  uint64                 // the term's documents
	boost  float64
	idf    float64
	avg    float64 // the field's average length under BM25, else 0
	weight float64 // Bleve's queryWeight: boost·idf·query norm
}

// sumBuilder builds the tree of a query over one index reader.
type sumBuilder struct {
	ctx    context.Context
	r      bindex.IndexReader
	m      mapping.IndexMapping
	model  string
	docs   *uint64 // the reader's document count, once read
	leaves []*sumLeaf
}

// node returns q's node, or false where a part of q cannot be summed
// (a match query whose analyzer leaves no term, an unknown analyzer):
// Bleve's searcher then answers, or reports the error.
func (b *sumBuilder) node(q query.Query) (*sumNode, bool, error) {
	switch q := q.(type) {
	case *query.TermQuery:
		l, err := b.leaf(q.Term, b.field(q.FieldVal), q.BoostVal.Value())
		return &sumNode{leaf: l}, err == nil, err
	case *query.MatchQuery:
		field := b.field(q.FieldVal)
		name := q.Analyzer
		if name == "" {
			name = b.m.AnalyzerNameForPath(field)
		}
		a := b.m.AnalyzerNamed(name)
		if a == nil {
			return nil, false, nil
		}
		tokens := a.Analyze([]byte(q.Match))
		if len(tokens) == 0 || tooMany(len(tokens)) {
			return nil, false, nil
		}
		kids := make([]*sumNode, len(tokens))
		for i, t := range tokens {
			l, err := b.leaf(string(t.Term), field, q.BoostVal.Value())
			if err != nil {
				return nil, false, err
			}
			kids[i] = &sumNode{leaf: l}
		}
		return disjunction(kids), true, nil
	case *query.DisjunctionQuery:
		kids := make([]*sumNode, len(q.Disjuncts))
		for i, d := range q.Disjuncts {
			k, ok, err := b.node(d)
			if err != nil || !ok {
				return nil, ok, err
			}
			kids[i] = k
		}
		return disjunction(kids), true, nil
	}
	return nil, false, nil
}

// field returns the field a query names, else the mapping's default
// search field.
func (b *sumBuilder) field(f string) string {
	if f == "" {
		return b.m.DefaultSearchField()
	}
	return f
}

// disjunction returns the disjunction of kids, ordered as Bleve's
// searcher adds their scores: by ascending document count where it keeps
// them in a slice (DisjunctionHeapTakeover clauses or fewer; Go's sort
// of so few is stable), else as given.
func disjunction(kids []*sumNode) *sumNode {
	if len(kids) <= searcher.DisjunctionHeapTakeover {
		slices.SortStableFunc(kids, func(a, b *sumNode) int { return cmp.Compare(a.count(), b.count()) })
	}
	return &sumNode{kids: kids, sumAcc: accs.Get().(*sumAcc)}
}

// leaf opens term's postings in field and computes its idf as Bleve's
// term searcher does under b's scoring model.
func (b *sumBuilder) leaf(term, field string, boost float64) (*sumLeaf, error) {
	r, err := b.r.TermFieldReader(b.ctx, []byte(term), field, true, true, false)
	if err != nil {
		return nil, err
	}
	l := &sumLeaf{r: r, count: r.Count(), boost: boost}
	b.leaves = append(b.leaves, l)
	if b.docs == nil {
		n, err := b.r.DocCount()
		if err != nil {
			return nil, err
		}
		b.docs = &n
	}
	docs := *b.docs
	if b.model == bindex.BM25Scoring {
		var card int
		if br, ok := b.r.(bindex.BM25Reader); ok {
			if card, err = br.FieldCardinality(field); err != nil {
				return nil, err
			}
		}
		if docs != 0 || card != 0 {
			l.avg = math.Ceil(float64(card) / float64(docs))
		}
	}
	if l.avg > 0 {
		l.idf = math.Log(1 + (float64(docs)-float64(l.count)+0.5)/(float64(l.count)+0.5))
	} else {
		l.idf = 1.0 + math.Log(float64(docs)/float64(l.count+1.0))
	}
	return l, nil
}

// closeLeaves closes the terms' postings readers.
func closeLeaves(leaves []*sumLeaf) error {
	var first error
	for _, l := range leaves {
		if err := l.r.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// count is n's document count as Bleve's searchers estimate it: a term's
// documents, a disjunction's kids' summed.
func (n *sumNode) count() uint64 {
	if n.leaf != nil {
		return n.leaf.count
	}
	var c uint64
	for _, k := range n.kids {
		c += k.count()
	}
	return c
}

// weight is n's sum of squared weights, as Bleve's searchers compute it
// for the query norm.
func (n *sumNode) weight() float64 {
	if l := n.leaf; l != nil {
		w := l.boost * l.idf
		return w * w
	}
	var w float64
	for _, k := range n.kids {
		w += k.weight()
	}
	return w
}

// setQueryNorm sets every term's query weight with the query norm, which
// the top disjunction computes and hands down to every term.
func (n *sumNode) setQueryNorm(norm float64) {
	if l := n.leaf; l != nil {
		l.weight = l.boost * l.idf * norm
		return
	}
	for _, k := range n.kids {
		k.setQueryNorm(norm)
	}
}

// score is the term's score in the current posting, as TermQueryScorer
// computes it.
func (l *sumLeaf) score() float64 {
	var tf float64
	if l.tfd.Freq < scorer.MaxSqrtCache {
		tf = scorer.SqrtCache[int(l.tfd.Freq)]
	} else {
		tf = math.Sqrt(float64(l.tfd.Freq))
	}
	var s float64
	if l.avg > 0 {
		fieldLength := 1 / (l.tfd.Norm * l.tfd.Norm)
		s = l.idf * (tf * search.BM25_k1) /
			(tf + search.BM25_k1*(1-search.BM25_b+(search.BM25_b*fieldLength/l.avg)))
	} else {
		s = tf * l.tfd.Norm * l.idf
	}
	if l.weight != 1.0 {
		s = s * l.weight
	}
	return s
}

// next reads the term's next posting.
func (l *sumLeaf) next() error {
	return l.read(l.r.Next(l.tfd.Reset()))
}

// read takes d, the posting Next or Advance read, as the current one.
func (l *sumLeaf) read(d *bindex.TermFieldDoc, err error) error {
	if err != nil {
		return err
	}
	if d == nil {
		l.done = true
		return nil
	}
	if d != &l.tfd {
		l.tfd = *d
	}
	l.at = l.tfd.ID.Value()
	return nil
}

// advanceTo reads on to the term's first posting at document number to
// or after.
func (l *sumLeaf) advanceTo(to uint64) error {
	if l.done || l.at >= to {
		return nil
	}
	l.id = bindex.NewIndexInternalID(l.id, to)
	d, err := l.r.Advance(l.id, l.tfd.Reset())
	return l.read(d, err)
}

// first returns the least document number of n's current postings, and
// false where none is left.
func (n *sumNode) first() (uint64, bool) {
	if l := n.leaf; l != nil {
		return l.at, !l.done
	}
	var least uint64
	found := false
	for _, k := range n.kids {
		if at, ok := k.first(); ok && (!found || at < least) {
			least, found = at, true
		}
	}
	return least, found
}

// add scores the documents start to end (exclusive, at most sumWindow
// after start) of n's kids into n's accumulators, kid after kid.
func (n *sumNode) add(start, end uint64) error {
	for _, k := range n.kids {
		if l := k.leaf; l != nil {
			for !l.done && l.at < end {
				n.mark(l.at-start, l.score())
				if err := l.next(); err != nil {
					return err
				}
			}
			continue
		}
		if err := k.add(start, end); err != nil {
			return err
		}
		k.each(n.mark)
	}
	return nil
}

// mark adds a kid's score s of the window's document i to n's
// accumulators.
func (n *sumNode) mark(i uint64, s float64) {
	n.sum[i] += s
	n.n[i]++
	n.seen[i/64] |= 1 << (i % 64)
}

// each calls f with every document of the window n matched, in document
// order, and its score, as DisjunctionQueryScorer computes it (the sum of
// its kids' scores times the fraction of kids matching), clearing n's
// accumulators as it goes.
func (n *sumNode) each(f func(i uint64, s float64)) {
	total := float64(len(n.kids))
	for w, word := range n.seen {
		for word != 0 {
			i := uint64(w*64 + bits.TrailingZeros64(word))
			word &= word - 1
			coord := float64(n.n[i]) / total
			f(i, n.sum[i]*coord)
			n.sum[i], n.n[i] = 0, 0
		}
		n.seen[w] = 0
	}
}

// clear reports whether n's accumulators and its kids' are cleared, as
// they are unless a search stopped within a window.
func (n *sumNode) clear() bool {
	if n.leaf != nil {
		return true
	}
	for _, k := range n.kids {
		if !k.clear() {
			return false
		}
	}
	return n.seen == [sumWindow / 64]uint64{}
}

// release hands n's accumulators and its kids' back to accs.
func (n *sumNode) release() {
	for _, k := range n.kids {
		k.release()
	}
	if n.sumAcc != nil {
		accs.Put(n.sumAcc)
		n.sumAcc = nil
	}
}

// sumTree is a query's tree over postings readers of its own.
type sumTree struct {
	root   *sumNode
	leaves []*sumLeaf
}

// score scores the windows of sumChunk document numbers holding a
// posting of the tree, every step-th from the parity-th on, and returns
// the best keep hits (see bestOf) and how many it scored.
func (t *sumTree) score(ctx context.Context, keep int, parity, step uint64) (bestOf, uint64, error) {
	best := bestOf{keep: keep}
	for _, l := range t.leaves {
		if err := l.next(); err != nil {
			return best, 0, err
		}
	}
	var count uint64
	for {
		at, ok := t.root.first()
		if !ok {
			return best, count, nil
		}
		if err := ctx.Err(); err != nil {
			return best, 0, err
		}
		w := at / sumChunk
		if w%step != parity {
			// The other tree's window (step is 2): on to the next.
			for _, l := range t.leaves {
				if err := l.advanceTo((w + 1) * sumChunk); err != nil {
					return best, 0, err
				}
			}
			continue
		}
		start := w * sumChunk
		if err := t.root.add(start, start+sumChunk); err != nil {
			return best, 0, err
		}
		t.root.each(func(i uint64, sc float64) {
			count++
			best.push(scored{start + i, sc})
		})
	}
}

// close hands the tree's accumulators back, cleared, and closes its
// postings readers.
func (t *sumTree) close() error {
	if t.root.clear() {
		t.root.release()
	}
	return closeLeaves(t.leaves)
}

// sumSearcher scores a sumQuery's tree term at a time, at the
// collector's first Next, and then yields, in document order, the best
// keep hits (in score, then document order, as Bleve's collector ranks
// them): no other can rank among the collector's keep. With two trees,
// the second scores every other window on another goroutine.
type sumSearcher struct {
	ctx   context.Context
	trees []*sumTree
	keep  int

	scored  bool
	dropped uint64 // hits not passed on
	passed
}

// score scores every window holding a posting of the trees.
func (s *sumSearcher) score() error {
	if len(s.trees) == 1 {
		best, count, err := s.trees[0].score(s.ctx, s.keep, 0, 1)
		return s.take(best, count, err)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	var (
		odd      bestOf
		oddCount uint64
		oddErr   error
		done     = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				oddErr = fmt.Errorf("index: searcher panicked: %v", p)
			}
		}()
		odd, oddCount, oddErr = s.trees[1].score(ctx, s.keep, 1, 2)
	}()
	best, count, err := s.trees[0].score(ctx, s.keep, 0, 2)
	if err != nil {
		cancel()
	}
	<-done
	if err == nil {
		err = oddErr
	}
	for _, h := range odd.h {
		best.push(h)
	}
	return s.take(best, count+oddCount, err)
}

// take keeps best's hits, by document number, to pass on, of count
// scored.
func (s *sumSearcher) take(best bestOf, count uint64, err error) error {
	if err != nil {
		return err
	}
	s.hits = best.h
	slices.SortFunc(s.hits, func(a, b scored) int { return cmp.Compare(a.num, b.num) })
	s.dropped = count - uint64(len(s.hits))
	return nil
}

// Next implements search.Searcher.
func (s *sumSearcher) Next(sc *search.SearchContext) (*search.DocumentMatch, error) {
	if !s.scored {
		s.scored = true
		if err := s.score(); err != nil {
			return nil, err
		}
	}
	return s.passed.match(sc), nil
}

// Advance implements search.Searcher.
func (s *sumSearcher) Advance(sc *search.SearchContext, id bindex.IndexInternalID) (*search.DocumentMatch, error) {
	return advance(s, sc, id)
}

// Close implements search.Searcher, closing every term's postings.
func (s *sumSearcher) Close() error {
	var first error
	for _, t := range s.trees {
		if err := t.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Weight implements search.Searcher.
func (s *sumSearcher) Weight() float64 { return s.trees[0].root.weight() }

// SetQueryNorm implements search.Searcher; the tree has set its own.
func (s *sumSearcher) SetQueryNorm(float64) {}

// Count implements search.Searcher: the terms' documents, summed, as
// Bleve's disjunctions estimate it.
func (s *sumSearcher) Count() uint64 { return s.trees[0].root.count() }

// Size implements search.Searcher.
func (s *sumSearcher) Size() int {
	leaves := 0
	for _, t := range s.trees {
		leaves += len(t.leaves)
	}
	return int(reflect.TypeFor[sumSearcher]().Size()) + 24*len(s.hits) + leaves*int(reflect.TypeFor[sumLeaf]().Size())
}

// Min implements search.Searcher.
func (s *sumSearcher) Min() int { return 0 }

// DocumentMatchPoolSize implements search.Searcher.
func (s *sumSearcher) DocumentMatchPoolSize() int { return 1 }
