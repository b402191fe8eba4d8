package stages

import (
	"cmp"
	"context"
	"hash/maphash"
	"slices"
	"sync/atomic"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// termTable is one document's stored terms, each with a value (its count
// in the terms payload, index.TermsPayload; its weight in a TWEAK
// vector), laid out so that a query's terms are found by one merge of two
// short sorted lists of hashes rather than by decoding and comparing
// every term the document holds: stages read the same documents query
// after query, and decoding and scanning each candidate's term list was
// most of their time. Built once from a payload (decodedPayloads keeps
// it), it is read-only but for a TF-IDF stage's cached norm.
type termTable struct {
	total float64  // the values' sum, in term order
	sq    float64  // the values' squares' sum, in term order
	terms string   // the terms in sorted order, concatenated
	ends  []uint32 // where each term ends in terms
	vals  []float64
	// hashes are the terms' hashes (termHash) in increasing order, and
	// order[k] the place among the terms of the one hashing to hashes[k].
	hashes []uint64
	order  []uint32
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

// queryTerms are a query's terms prepared for looking up in term tables:
// their hashes in increasing order, each with the place of its term.
type queryTerms struct {
	terms  []string
	hashes []uint64
	at     []int
}

// newQueryTerms prepares terms for lookups (termTable.values).
func newQueryTerms(terms []string) *queryTerms {
	q := &queryTerms{terms: terms, hashes: make([]uint64, len(terms)), at: make([]int, len(terms))}
	for j := range terms {
		q.at[j] = j
	}
	sortByHash(q.at, q.hashes, func(j int) string { return terms[j] })
	return q
}

// sortByHash orders places, the places of terms, by the terms' hashes,
// and sets hashes to them in that order.
func sortByHash[T int | uint32](places []T, hashes []uint64, term func(T) string) {
	type entry struct {
		h uint64
		p T
	}
	es := make([]entry, len(places))
	for i, p := range places {
		es[i] = entry{termHash(term(p)), p}
	}
	slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.h, b.h) })
	for i, e := range es {
		places[i], hashes[i] = e.p, e.h
	}
}

// values sets vals[j] to the value of q's j-th term in the document, and
// found[j] to whether the document holds it (vals[j] 0 where not).
func (t *termTable) values(q *queryTerms, vals []float64, found []bool) {
	clear(vals)
	clear(found)
	i, k := 0, 0
	for i < len(t.hashes) && k < len(q.hashes) {
		a, b := t.hashes[i], q.hashes[k]
		if a < b {
			i++
			continue
		}
		if a > b {
			k++
			continue
		}
		// Every term of either side with this hash: equal hashes need
		// not be equal terms.
		i2, k2 := i+1, k+1
		for i2 < len(t.hashes) && t.hashes[i2] == a {
			i2++
		}
		for k2 < len(q.hashes) && q.hashes[k2] == a {
			k2++
		}
		for _, x := range t.order[i:i2] {
			for _, j := range q.at[k:k2] {
				if t.term(int(x)) == q.terms[j] {
					vals[j], found[j] = t.vals[x], true
				}
			}
		}
		i, k = i2, k2
	}
}

// size is what the table holds, in bytes, as decodedPayloads budgets it.
func (t *termTable) size() int {
	const header = 160 // the struct and its slices' headers
	return header + len(t.terms) + 4*(len(t.ends)+len(t.order)) + 8*(len(t.vals)+len(t.hashes))
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
	t.hashes = make([]uint64, len(t.ends))
	t.order = make([]uint32, len(t.ends))
	for i := range t.order {
		t.order[i] = uint32(i)
	}
	sortByHash(t.order, t.hashes, func(i uint32) string { return t.term(int(i)) })
	return t, nil
}

// termSeed seeds the hashes of terms in tables and in queries alike.
var termSeed = maphash.MakeSeed()

// termHash is the hash a termTable orders term by.
func termHash(term string) uint64 { return maphash.String(termSeed, term) }

// hashTerms returns the termHash of each of terms.
func hashTerms(terms []string) []uint64 {
	out := make([]uint64, len(terms))
	for i, t := range terms {
		out[i] = termHash(t)
	}
	return out
}

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
