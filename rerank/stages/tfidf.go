package stages

import (
	"context"
	"errors"
	"hash/maphash"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/internal/runs"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage("tfidf", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		if env.Stats == nil {
			return nil, errors.New("tfidf needs collection statistics: build the pipeline against a semrank index with rerank.EnvFor(idx) (index.Open or index.Create); a plain bleve.Index has none")
		}
		var o TFIDFOptions
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		if b2f(o.Titles)+b2f(o.Field != "")+b2f(o.Peers) > 1 {
			return nil, errors.New(`tfidf: options "titles", "field" and "peers" exclude each other`)
		}
		return &TFIDF{Stats: env.Stats, Payloads: env.Payloads, Analyze: env.Analyze, Field: o.Field, Titles: o.Titles, Peers: o.Peers, name: spec.DisplayName("tfidf")}, nil
	})
}

// TFIDFOptions are the options of a tfidf stage: what the candidates are
// compared with (see TFIDF's fields of the same names); at most one is
// set.
type TFIDFOptions struct {
	Field  string `yaml:"field"`
	Titles bool   `yaml:"titles"`
	Peers  bool   `yaml:"peers"`
}

// TFIDF scores candidates by the cosine of query and document TF-IDF
// vectors over the index's analyzed terms, with tf = 1 + log(count) and
// idf = log(N / df): the classic vector-space baseline the papers compare
// against.
//
// Document term counts come from the index's built-in terms payload
// (index.TermsPayload) when it has one, else from analyzing the text.
// With Field set (option "field"), the candidate's text is instead that
// string metadata field — for SemEval subtask B, "thread_text", the
// answers in the related question's thread — and IDF still comes from the
// index. With Titles set (option "titles"), only the query's first line
// (its subject; see tweak.SplitQuery) is compared with the candidate's
// title: forum subjects are short summaries of the question, and two
// questions with the same subject are often duplicates even when their
// bodies share few words. With Peers set (option "peers"), a candidate is
// compared not with the query but with the other candidates: its score is
// the mean cosine with the candidates written by other users (metadata
// "user_id"; every other candidate when users are unknown). In a SemEval
// subtask A thread, answers to the question share its topic and each
// other's words, while chat, thanks and jokes share little with anything.
type TFIDF struct {
	Stats    rerank.TermStats
	Payloads rerank.Payloads // may be nil
	// Analyze gives a text's terms as the index analyzed them, the terms
	// Stats counts (rerank.Env.Analyze); nil means semrank's analyzer.
	Analyze func(string) []string
	Field   string // metadata field to compare instead of title and text
	Titles  bool   // compare the query's subject with the candidate's title
	Peers   bool   // compare each candidate with the other candidates
	name    string
	norms   normCache
}

// normCache remembers the squared TF-IDF norms of documents scored from
// their text, keyed by document id and checked against a hash of the text
// they were computed from, for as long as the collection's document count stays the
// same: a norm sums over every term of the document, the cosine's dot
// product over the query's few. Its zero value is empty and ready; it is
// safe for concurrent use.
type normCache struct {
	mu   sync.Mutex
	seed maphash.Seed
	n    uint64 // the document count the norms were computed with
	m    map[string]cachedNorm
}

type cachedNorm struct {
	hash uint64
	sq   float64
}

// normCacheSize bounds the norms a TFIDF stage remembers.
const normCacheSize = 1 << 16

// get returns id's cached norm when its text hashes as when it was
// cached and the document count is still n; and the text's hash.
func (c *normCache) get(id string, text string, n uint64) (sq float64, hash uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.n != n {
		c.seed, c.n, c.m = maphash.MakeSeed(), n, map[string]cachedNorm{}
	}
	h := maphash.String(c.seed, text)
	e, ok := c.m[id]
	return e.sq, h, ok && e.hash == h
}

// put caches id's norm sq, computed from a text hashing to hash with n
// documents.
func (c *normCache) put(id string, hash, n uint64, sq float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n != n {
		return // computed against another count
	}
	if len(c.m) >= normCacheSize {
		c.m = map[string]cachedNorm{}
	}
	c.m[id] = cachedNorm{hash, sq}
}

// tokens returns text's terms analyzed by analyze, or by semrank's
// analyzer when it is nil. The slice may be shared: callers must not
// modify it.
func tokens(analyze func(string) []string, text string) []string {
	if analyze == nil {
		return analyzers.CachedTokens(text)
	}
	return analyze(text)
}

// Name implements rerank.Stage.
func (t *TFIDF) Name() string {
	if t.name == "" {
		return "tfidf"
	}
	return t.name
}

// ReadsMetadata implements rerank.MetadataReader: the stage reads a
// candidate's metadata when it weighs a metadata field (Field).
func (t *TFIDF) ReadsMetadata() bool { return t.Field != "" }

// idfs are the IDFs of the terms a window weighs, in a collection of n
// documents, each looked up in stats once.
type idfs struct {
	stats rerank.TermStats
	n     uint64
	m     map[string]float64
}

// of returns term's IDF.
func (d *idfs) of(term string) (float64, error) {
	w, ok := d.m[term]
	if !ok {
		df, err := d.stats.DocFreq(term)
		if err != nil {
			return 0, err
		}
		w = idfWeight(d.n, df)
		d.m[term] = w
	}
	return w, nil
}

// weigh returns the TF-IDF vector of a document's sorted term counts.
func (d *idfs) weigh(counts []index.TermCount) ([]termWeight, error) {
	v := make([]termWeight, len(counts))
	for i, tc := range counts {
		w, err := d.of(tc.Term)
		if err != nil {
			return nil, err
		}
		v[i] = termWeight{tc.Term, tfidfWeight(tc.Count, w)}
	}
	return v, nil
}

// idfWeight is the IDF of a term in df of n documents.
func idfWeight(n, df uint64) float64 {
	return math.Log((float64(n) + 1) / (float64(df) + 1))
}

// tfidfWeight is a term's weight in a TF-IDF vector: (1 + log count)·idf.
func tfidfWeight(count int, idf float64) float64 {
	return (1 + math.Log(float64(count))) * idf
}

// termWeight is one term of a sparse TF-IDF vector. Vectors are sorted by
// term, so that sums over them run in one fixed order.
type termWeight struct {
	term string
	w    float64
}

// windowTerms returns every candidate's stored term counts, the index's
// built-in terms payload (index.TermsPayload), nil where it has none (see
// rerank.ReadWindowPayloads).
func windowTerms(ctx context.Context, p rerank.Payloads, cands []rerank.Candidate) ([][]byte, error) {
	return termsOf(ctx, p, rerank.IDs(cands))
}

// termsOf is windowTerms for the candidates ids.
func termsOf(ctx context.Context, p rerank.Payloads, ids []string) ([][]byte, error) {
	return rerank.ReadWindowPayloads(ctx, p, index.TermsPayload, termsModel, ids)
}

// termsMissingIn sets reads[i] where the index's terms payload lacks
// ids[i] (rerank.DocReader).
func termsMissingIn(ctx context.Context, p rerank.Payloads, ids []string, reads []bool) error {
	stored, err := termsOf(ctx, p, ids)
	return markMissing(stored, err, reads)
}

// termList returns a candidate's analyzed term counts in sorted order:
// decoded from b, its stored terms payload (see windowTerms), else (b nil)
// from analyzing the text with analyze (see tokens).
func termList(b []byte, analyze func(string) []string, c rerank.Candidate) ([]index.TermCount, error) {
	if b != nil {
		return index.DecodeTermList(b)
	}
	return index.CountTerms(tokens(analyze, c.FullText())), nil
}

// termPlaces gives each of a window's query terms its place, for
// counting them in candidates' analyzed text. A text's tokens are mostly
// not query terms, and most of those are told apart by their length and
// first byte before the map is asked.
type termPlaces struct {
	pos   map[string]int
	lens  uint64    // bit l: some term has length l (l < 64)
	first [4]uint64 // bit b: some term begins with byte b
	long  bool      // some term is 64 bytes or longer
}

func newTermPlaces(terms []string) *termPlaces {
	p := &termPlaces{pos: make(map[string]int, len(terms))}
	for j, t := range terms {
		p.pos[t] = j
		if len(t) >= 64 {
			p.long = true
		} else {
			p.lens |= 1 << len(t)
		}
		if len(t) > 0 {
			p.first[t[0]>>6] |= 1 << (t[0] & 63)
		}
	}
	return p
}

// place returns the place of term t, or −1 when it is no query term.
func (p *termPlaces) place(t string) int {
	if l := len(t); l < 64 && p.lens&(1<<l) == 0 || l >= 64 && !p.long ||
		l > 0 && p.first[t[0]>>6]&(1<<(t[0]&63)) == 0 {
		return -1
	}
	if i, ok := p.pos[t]; ok {
		return i
	}
	return -1
}

// textCounts sets counts[j] to how often the j-th term of places occurs
// in toks, a candidate's analyzed text, and returns its number of tokens.
func textCounts(toks []string, places *termPlaces, counts []int) int {
	clear(counts)
	for _, t := range toks {
		if i := places.place(t); i >= 0 {
			counts[i]++
		}
	}
	return len(toks)
}

// windowCounts returns, for every candidate, counts[i][j], how often
// terms[j] (sorted and distinct) occurs in cands[i], and totals[i], its
// number of tokens: read off the table of its stored term counts
// (windowTables), else counted in its text analyzed by analyze.
// stats names analyze's analysis: the stage's statistics, which stages
// built from one rerank.Env share with their analyzer (nil: none).
// Stages reading the same payloads, or none, with the same statistics and
// terms share one computation per window (rerank.WindowMemo), so callers
// must not modify what it returns.
func windowCounts(ctx context.Context, p rerank.Payloads, stats rerank.TermStats, analyze func(string) []string, cands []rerank.Candidate, terms []string) (counts [][]int, totals []int, err error) {
	type result struct {
		counts [][]int
		totals []int
	}
	compute := func() (any, error) {
		tabs, err := windowTables(ctx, p, cands)
		if err != nil {
			return nil, err
		}
		q := newQueryTerms(terms)
		// The candidates without a table are analyzed first, on every
		// core: a window of new candidates is otherwise analyzed one
		// after another.
		var need []int
		for i, t := range tabs {
			if t == nil {
				need = append(need, i)
			}
		}
		var toks [][]string
		var places *termPlaces
		if len(need) > 0 {
			toks, places = make([][]string, len(cands)), newTermPlaces(terms)
			if err := runs.Each(len(need), func(k int) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				toks[need[k]] = tokens(analyze, cands[need[k]].FullText())
				return nil
			}); err != nil {
				return nil, err
			}
		}
		vals, found := make([]float64, len(terms)), make([]bool, len(terms))
		r := result{make([][]int, len(cands)), make([]int, len(cands))}
		flat := make([]int, len(cands)*len(terms))
		for i := range cands {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			counts := flat[i*len(terms) : (i+1)*len(terms) : (i+1)*len(terms)]
			r.counts[i] = counts
			t := tabs[i]
			if t == nil {
				r.totals[i] = textCounts(toks[i], places, counts)
				continue
			}
			t.values(q, vals, found)
			for j, v := range vals {
				counts[j] = int(v)
			}
			r.totals[i] = int(t.total)
		}
		return r, nil
	}
	// Payloads read through an index's own fields come with its own
	// analysis, and text is analyzed as stats counts, so they and the
	// terms name the result.
	type key struct {
		p     rerank.Payloads
		stats rerank.TermStats
		terms string
	}
	memo := rerank.WindowMemoOf(ctx)
	if p == nil && stats == nil || p != nil && !reflect.TypeOf(p).Comparable() || stats != nil && !reflect.TypeOf(stats).Comparable() {
		memo = nil
	}
	v, err := memo.Do(key{p, stats, strings.Join(terms, "\x00")}, compute)
	if err != nil {
		return nil, nil, err
	}
	r := v.(result)
	if len(terms) > 0 {
		// The totals alone (length's) are these, found without another
		// pass over the term lists when asked for later.
		_, _ = memo.Do(key{p, stats, ""}, func() (any, error) {
			return result{make([][]int, len(cands)), r.totals}, nil
		})
	}
	return r.counts, r.totals, nil
}

// ReadsDocs implements rerank.DocReader: a candidate's text is read where
// the index holds no term counts for it, and its title or fields when
// options compare those.
func (t *TFIDF) ReadsDocs(ctx context.Context, ids []string, reads []bool) error {
	if t.Field != "" || t.Titles || t.Peers {
		return allRead(reads)
	}
	return termsMissingIn(ctx, t.Payloads, ids, reads)
}

// WindowPayloads implements rerank.PayloadReader: the term counts, where
// ReadsDocs reads them.
func (t *TFIDF) WindowPayloads() (rerank.Payloads, []rerank.PayloadKind) {
	if t.Field != "" || t.Titles || t.Peers {
		return nil, nil
	}
	return termsPayload(t.Payloads).windowPayloads()
}

// allRead sets every reads[i]: the stage reads every document.
func allRead(reads []bool) error {
	for i := range reads {
		reads[i] = true
	}
	return nil
}

// Score implements rerank.Stage.
func (t *TFIDF) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	n, err := t.Stats.DocCount()
	if err != nil {
		return nil, err
	}
	if t.Peers {
		return t.scorePeers(ctx, cands, n)
	}
	// Every candidate's terms are weighed unless the stored path scores
	// (the query's terms alone): sized for them, the map grows less.
	size := 0
	if t.Field != "" || t.Titles {
		size = 32 * len(cands)
	}
	idf := &idfs{stats: t.Stats, n: n, m: make(map[string]float64, size)}
	if t.Field == "" && !t.Titles {
		return t.scoreStored(ctx, q, cands, idf)
	}
	vecs := make([][]termWeight, len(cands))
	for i, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		text := c.Title
		if t.Field != "" {
			text, _ = c.Metadata[t.Field].(string)
		}
		if vecs[i], err = idf.weigh(index.CountTerms(tokens(t.Analyze, text))); err != nil {
			return nil, err
		}
	}
	qtext := q.Text
	if t.Titles {
		qtext, _ = tweak.SplitQuery(q.Text)
	}
	qv, err := idf.weigh(index.CountTerms(tokens(t.Analyze, qtext)))
	if err != nil {
		return nil, err
	}
	qSq := squares(qv)
	out := make([]float64, len(cands))
	for i, dv := range vecs {
		out[i] = cosineSorted(qv, qSq, dv)
	}
	return out, nil
}

// tfidfQuery is the query's side of the stored path's cosines: its
// TF-IDF vector and the vector's sum of squares, its terms and their
// IDFs, in a collection of n documents.
type tfidfQuery struct {
	n     uint64
	v     []termWeight
	sq    float64
	terms []string
	idf   []float64
}

// storedQuery weighs q's terms by idf, which keeps their IDFs.
func (t *TFIDF) storedQuery(q rerank.Query, idf *idfs) (tfidfQuery, error) {
	qv, err := idf.weigh(index.CountTerms(tokens(t.Analyze, q.Text)))
	if err != nil {
		return tfidfQuery{}, err
	}
	pq := tfidfQuery{n: idf.n, v: qv, sq: squares(qv), terms: make([]string, len(qv)), idf: make([]float64, len(qv))}
	for i, tw := range qv {
		pq.terms[i] = tw.term
		if pq.idf[i], err = idf.of(tw.term); err != nil {
			return tfidfQuery{}, err
		}
	}
	return pq, nil
}

// query returns q's side of the stored path, once a window (prepared).
func (t *TFIDF) query(ctx context.Context, q rerank.Query) (tfidfQuery, error) {
	return prepared(ctx, t, q, func() (tfidfQuery, error) {
		n, err := t.Stats.DocCount()
		if err != nil {
			return tfidfQuery{}, err
		}
		return t.storedQuery(q, &idfs{stats: t.Stats, n: n, m: map[string]float64{}})
	})
}

// PrepareQuery implements rerank.QueryPreparer: on the stored path
// (neither peers, titles nor a field), the query's vector.
func (t *TFIDF) PrepareQuery(ctx context.Context, q rerank.Query) {
	if !t.Peers && t.Field == "" && !t.Titles {
		_, _ = t.query(ctx, q)
	}
}

// scoreStored scores cands against the query's text from their term
// counts: stored in the index (looked up in their term tables), or counted
// in their analyzed text. A candidate's norm is cached (tableNorm,
// textNorm) and its dot product with the query computed from the query
// terms' counts alone; the cosine is cosineSorted's, to the last bit.
func (t *TFIDF) scoreStored(ctx context.Context, q rerank.Query, cands []rerank.Candidate, idf *idfs) ([]float64, error) {
	pq, err := t.query(ctx, q)
	if err != nil {
		return nil, err
	}
	if pq.n != idf.n {
		// Prepared against another document count: weighed again.
		if pq, err = t.storedQuery(q, idf); err != nil {
			return nil, err
		}
	}
	for j, term := range pq.terms {
		idf.m[term] = pq.idf[j] // as idf.of would find them
	}
	qv, qSq, qterms, qidf := pq.v, pq.sq, pq.terms, pq.idf
	counts, _, err := windowCounts(ctx, t.Payloads, t.Stats, t.Analyze, cands, qterms)
	if err != nil {
		return nil, err
	}
	tabs, err := windowTables(ctx, t.Payloads, cands)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(cands))
	for i, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var sq float64
		if tabs[i] != nil {
			if sq, err = t.tableNorm(tabs[i], idf); err != nil {
				return nil, err
			}
		} else if sq, err = t.textNorm(c, idf); err != nil {
			return nil, err
		}
		dot := 0.0
		for j, x := range qv {
			bw := 0.0
			if n := counts[i][j]; n > 0 {
				bw = tfidfWeight(n, qidf[j])
			}
			dot += x.w * bw
		}
		if qSq != 0 && sq != 0 {
			out[i] = dot / math.Sqrt(qSq*sq)
		}
	}
	return out, nil
}

// tableNorm returns the squared TF-IDF norm of the document whose stored
// terms tab holds, in a collection of n documents: cached in the table
// for this stage and n, else summed over its terms in their sorted order,
// as squares of weigh's vector sums them.
func (t *TFIDF) tableNorm(tab *termTable, idf *idfs) (float64, error) {
	n := idf.n
	tab.normMu.Lock()
	c := tab.norm
	tab.normMu.Unlock()
	if c.owner == t && c.n == n {
		return c.sq, nil
	}
	sq := 0.0
	var err error
	tab.each(func(term []byte, c float64) {
		if err != nil {
			return
		}
		var w float64
		if w, err = idf.of(string(term)); err == nil {
			w = tfidfWeight(int(c), w)
			sq += w * w
		}
	})
	if err != nil {
		return 0, err
	}
	tab.normMu.Lock()
	tab.norm = tableNorm{owner: t, n: n, sq: sq}
	tab.normMu.Unlock()
	return sq, nil
}

// textNorm returns the squared TF-IDF norm of c's analyzed text, in a
// collection of n documents: cached by document (normCache), else
// computed from weigh's vector of its term counts.
func (t *TFIDF) textNorm(c rerank.Candidate, idf *idfs) (float64, error) {
	text := c.FullText()
	sq, h, hit := t.norms.get(c.ID, text, idf.n)
	if hit {
		return sq, nil
	}
	dv, err := idf.weigh(index.CountTerms(tokens(t.Analyze, text)))
	if err != nil {
		return 0, err
	}
	sq = squares(dv)
	t.norms.put(c.ID, h, idf.n, sq)
	return sq, nil
}

// cosineSorted is the cosine of two term-sorted vectors, given a's sum of
// squares: a merge of the two lists, with the dot product summed in a's
// term order and b's squares in b's.
func cosineSorted(a []termWeight, aSq float64, b []termWeight) float64 {
	dot, j := 0.0, 0
	for _, x := range a {
		for j < len(b) && b[j].term < x.term {
			j++
		}
		bw := 0.0
		if j < len(b) && b[j].term == x.term {
			bw = b[j].w
		}
		dot += x.w * bw
	}
	bSq := squares(b)
	if aSq == 0 || bSq == 0 {
		return 0
	}
	return dot / math.Sqrt(aSq*bSq)
}

// squares adds the squares of v's weights in its order.
func squares(v []termWeight) float64 {
	s := 0.0
	for _, tw := range v {
		s += tw.w * tw.w
	}
	return s
}

// Cosine returns the cosine of two sparse vectors (0 when either is zero).
// It adds in sorted key order: a map's iteration order changes from loop to
// loop, and so would the rounding of a sum taken in it, making scores, and
// whatever is trained on them, differ from run to run.
func Cosine(a, b map[string]float64) float64 {
	av := sortedWeights(a)
	return cosineSorted(av, squares(av), sortedWeights(b))
}

// sortedWeights returns v as a term-sorted vector.
func sortedWeights(v map[string]float64) []termWeight {
	out := make([]termWeight, 0, len(v))
	for _, term := range slices.Sorted(maps.Keys(v)) {
		out = append(out, termWeight{term, v[term]})
	}
	return out
}
