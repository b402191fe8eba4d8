package stages

import (
	"context"
	"hash/maphash"
	"math/bits"
	"sync/atomic"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// termTable is one document's stored terms, each with a value (its count
// in the terms payload, index.TermsPayload; its weight in a TWEAK
// vector), with each term's hash, so that a query's terms are found by
// one pass over the document's hashes, each looked up in a small table
// of the query's (queryTerms), rather than by decoding and comparing
// every term the document holds: stages read the same documents query
// after query, and decoding and scanning each candidate's term list was
// most of their time. Built once from a payload (decodedPayloads keeps
// it), it is read-only but for a TF-IDF stage's cached norm.
type termTable struct {
	total  float64  // the values' sum, in term order
	sq     float64  // the values' squares' sum, in term order
	terms  string   // the terms in sorted order, concatenated
	ends   []uint32 // where each term ends in terms
	vals   []float64
	hashes []uint32 // each term's termHash: half the bytes a window's pass reads of 64-bit ones
	norm   atomic.Pointer[tableNorm]
}

// tableNorm is a TF-IDF stage's squared norm of a document (see
// TFIDF.scoreStored), valid for that stage and document count.
type tableNorm struct {
	owner *TFIDF
	n     uint64
	sq    float64
}

// term returns the table's i-th term.
func (t *termTable) term(i int) string {
	start := uint32(0)
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.terms[start:t.ends[i]]
}

// queryTerms are a query's terms placed by hash (termHash) in a table at
// most a quarter full, small enough to stay in cache while a window's
// documents are looked up in it.
type queryTerms struct {
	terms  []string
	hashes []uint32
	slots  []int32 // a term's place + 1, 0 for an empty slot
	mask   uint32
}

// newQueryTerms places terms, which are distinct, for lookups
// (termTable.values).
func newQueryTerms(terms []string) *queryTerms {
	n := 1 << bits.Len(uint(4*len(terms)))
	q := &queryTerms{terms: terms, hashes: make([]uint32, len(terms)), slots: make([]int32, n), mask: uint32(n - 1)}
	for j, t := range terms {
		h := termHash(t)
		q.hashes[j] = h
		s := h & q.mask
		for q.slots[s] != 0 {
			s = (s + 1) & q.mask
		}
		q.slots[s] = int32(j + 1)
	}
	return q
}

// values sets vals[j] to the value of q's j-th term in the document, and
// found[j] to whether the document holds it (vals[j] 0 where not).
func (t *termTable) values(q *queryTerms, vals []float64, found []bool) {
	clear(vals)
	clear(found)
	for x, h := range t.hashes {
		for s := h & q.mask; ; s = (s + 1) & q.mask {
			j := q.slots[s] - 1
			if j < 0 {
				break
			}
			// Equal hashes need not be equal terms.
			if q.hashes[j] == h && q.terms[j] == t.term(x) {
				vals[j], found[j] = t.vals[x], true
				break
			}
		}
	}
}

// size is what the table holds, in bytes, as decodedPayloads budgets it.
func (t *termTable) size() int {
	const header = 160 // the struct and its slices' headers
	return header + len(t.terms) + 4*(len(t.ends)+len(t.hashes)) + 8*len(t.vals)
}

// termDecoder checks a payload, calling size with its number of terms and
// then fn with each term, in sorted order, and its value; term's bytes are
// fn's to copy. It returns the payload's own decoding error.
type termDecoder func(b []byte, size func(n int), fn func(term []byte, v float64)) error

// termCounts is the termDecoder of index.TermsPayload.
func termCounts(b []byte, size func(n int), fn func(term []byte, v float64)) error {
	return index.EachTermCount(b, size, func(term []byte, c int) { fn(term, float64(c)) })
}

// newTermTable builds the table of b, a payload decoded by decode; a
// malformed b is decode's error.
func newTermTable(b []byte, decode termDecoder) (*termTable, error) {
	t := &termTable{}
	var terms []byte
	err := decode(b, func(n int) {
		terms = make([]byte, 0, len(b))
		t.ends = make([]uint32, 0, n)
		t.vals = make([]float64, 0, n)
	}, func(term []byte, v float64) {
		terms = append(terms, term...)
		t.ends = append(t.ends, uint32(len(terms)))
		t.vals = append(t.vals, v)
		t.total += v
		t.sq += v * v
	})
	if err != nil {
		return nil, err
	}
	t.terms = string(terms)
	t.hashes = make([]uint32, len(t.ends))
	for i := range t.hashes {
		t.hashes[i] = termHash(t.term(i))
	}
	return t, nil
}

// termSeed seeds the hashes of terms in tables and in queries alike.
var termSeed = maphash.MakeSeed()

// termHash is the hash a termTable and queryTerms know term by.
func termHash(term string) uint32 { return uint32(maphash.String(termSeed, term)) }

// windowTables returns the table of every candidate's stored term
// counts (windowTerms), nil where it has none, once per window however
// many stages ask: callers must not modify them.
func windowTables(ctx context.Context, p rerank.Payloads, cands []rerank.Candidate) ([]*termTable, error) {
	return storedPayload{payloads: p, name: index.TermsPayload, model: (index.TermsEncoder{}).ModelID()}.tables(ctx, cands, termCounts)
}

// tables returns the table of every candidate's payload, decoded by
// decode, nil where it has none (see decodedWindow).
func (s storedPayload) tables(ctx context.Context, cands []rerank.Candidate, decode termDecoder) ([]*termTable, error) {
	return decodedWindow(ctx, s, cands, func(b []byte) (*termTable, int, error) {
		t, err := newTermTable(b, decode)
		if err != nil {
			return nil, 0, err
		}
		return t, t.size(), nil
	})
}
