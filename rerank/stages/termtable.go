package stages

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/bits"
	"sync"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// termTable is one document's stored terms, each with a value (its count
// in the terms payload, index.TermsPayload; its weight in a TWEAK
// vector), laid out so that a query's terms are looked up rather than
// every term the document holds decoded and compared: stages read the
// same documents query after query, and decoding and scanning each
// candidate's term list was most of their time. A window's lookups are
// bound by memory, so a term the document lacks is mostly told by its
// filter alone (one cache line), and a term it holds by a slot and the
// term's record next to its value. Built once from a payload
// (decodedPayloads keeps it), it is read-only but for a TF-IDF stage's
// cached norm.
type termTable struct {
	total float64 // the values' sum, in term order
	sq    float64 // the values' squares' sum, in term order
	// filter has two bits set for each term (filterBits), so that most
	// terms it lacks are found missing without a slot read.
	filter [8]uint64
	// slots places the terms by hash, open addressing, two words a
	// slot: the term's key (termKey; 0 for an empty slot) and its value's
	// float64 bits. A term of up to 7 bytes is its key, so that finding
	// it reads one slot; a longer one's key holds bits of its hash and
	// the offset of its record in recs, whose bytes tell it.
	slots []uint64
	// recs holds each term's record in term order: its value (float64
	// bits, little endian), uvarint length, bytes.
	recs []byte
	// norm is a TF-IDF stage's norm of the document, kept in the table
	// itself, whose cache lines a window's lookups have just read, rather
	// than behind a pointer of its own.
	normMu sync.Mutex
	norm   tableNorm
}

// tableNorm is a TF-IDF stage's squared norm of a document (see
// TFIDF.scoreStored), valid for that stage and document count.
type tableNorm struct {
	owner *TFIDF
	n     uint64
	sq    float64
}

// filterBits returns the two filter bits of a term hashing to h.
func filterBits(h uint64) (a, b uint) { return uint(h>>55) & 511, uint(h>>46) & 511 }

// Keys: a term of at most shortTerm bytes is keyed by its bytes (little
// endian) and its length + 1 in the top byte, so that two such keys are
// equal exactly when their terms are; a longer term by longKey in the top
// byte, 24 bits of its hash and the offset + 1 of its record, a query's
// by offset 0, which equals no slot's. No key is 0.
const (
	shortTerm = 7
	longKey   = 0xff << 56
	tagMask   = 0xffffff << 32
)

// termKey returns the key of term hashing to h, whose record (if longer
// than shortTerm) begins at off - 1 in recs (a query's term: off 0).
func termKey(term string, h uint64, off uint32) uint64 {
	if len(term) > shortTerm {
		return longKey | h&tagMask | uint64(off)
	}
	k := uint64(len(term)+1) << 56
	for i := 0; i < len(term); i++ {
		k |= uint64(term[i]) << (8 * i)
	}
	return k
}

// record returns the record at off in recs: its value, its term, and
// where the next begins.
func (t *termTable) record(off int) (v float64, term []byte, next int) {
	v = math.Float64frombits(binary.LittleEndian.Uint64(t.recs[off:]))
	n, k := binary.Uvarint(t.recs[off+8:])
	start := off + 8 + k
	return v, t.recs[start : start+int(n)], start + int(n)
}

// each calls fn with every term and its value, in term order.
func (t *termTable) each(fn func(term []byte, v float64)) {
	for off := 0; off < len(t.recs); {
		v, term, next := t.record(off)
		fn(term, v)
		off = next
	}
}

// probe returns the value of q's j-th term, found by its slot chain from
// slot i on, and whether the document holds it.
func (t *termTable) probe(q *queryTerms, j int, i uint64) (float64, bool) {
	k, mask := q.keys[j], uint64(len(t.slots)/2-1)
	for ; ; i = (i + 1) & mask {
		s := t.slots[2*i]
		if s == 0 {
			return 0, false
		}
		if s == k {
			return math.Float64frombits(t.slots[2*i+1]), true
		}
		if k >= longKey && s>>32 == k>>32 {
			// Equal hash bits need not be equal terms.
			if _, got, _ := t.record(int(uint32(s)) - 1); string(got) == q.terms[j] {
				return math.Float64frombits(t.slots[2*i+1]), true
			}
		}
	}
}

// queryTerms are a query's terms with their hashes, keys and filter
// bits, for lookups, and scratch space for them: one goroutine at a time
// looks them up.
type queryTerms struct {
	terms  []string
	hashes []uint64
	keys   []uint64
	bits   [][2]uint16 // filterBits
	passed []int32     // scratch: the terms a table's filter passes
}

// newQueryTerms prepares terms for lookups (termTable.values).
func newQueryTerms(terms []string) *queryTerms {
	n := len(terms)
	q := &queryTerms{terms: terms, hashes: make([]uint64, n), keys: make([]uint64, n), bits: make([][2]uint16, n), passed: make([]int32, n)}
	for j, t := range terms {
		q.setHash(j, termHash(t))
	}
	return q
}

// setHash sets the hash of q's j-th term to h, and what follows from it.
func (q *queryTerms) setHash(j int, h uint64) {
	a, b := filterBits(h)
	q.hashes[j], q.keys[j], q.bits[j] = h, termKey(q.terms[j], h, 0), [2]uint16{uint16(a), uint16(b)}
}

// values sets vals[j] to the value of q's j-th term in the document, and
// found[j] to whether the document holds it (vals[j] 0 where not). The
// filter is tested for every term first, without a branch, and the
// first slots of the terms it passes read after: the reads of one
// document's slots, mostly cache misses, then overlap rather than wait
// each behind a mispredicted branch on the filter.
func (t *termTable) values(q *queryTerms, vals []float64, found []bool) {
	passed := q.passed[:len(q.terms)]
	n := 0
	for j, ab := range q.bits[:len(passed)] {
		a, b := ab[0], ab[1]
		passed[n] = int32(j)
		n += int(t.filter[a>>6] >> (a & 63) & (t.filter[b>>6] >> (b & 63)) & 1)
		vals[j], found[j] = 0, false
	}
	mask := uint64(len(t.slots)/2 - 1)
	for _, j := range passed[:n] {
		i := q.hashes[j] & mask
		if s := t.slots[2*i]; s == q.keys[j] {
			vals[j], found[j] = math.Float64frombits(t.slots[2*i+1]), true
		} else if s != 0 {
			vals[j], found[j] = t.probe(q, int(j), i)
		}
	}
}

// size is what the table holds, in bytes, as decodedPayloads budgets it.
func (t *termTable) size() int {
	const header = 160 // the struct and its slices' headers
	return header + len(t.recs) + 8*len(t.slots)
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
	var offs []uint32
	err := decode(b, func(n int) {
		t.recs = make([]byte, 0, len(b)+10*n)
		offs = make([]uint32, 0, n)
	}, func(term []byte, v float64) {
		offs = append(offs, uint32(len(t.recs)))
		t.recs = binary.LittleEndian.AppendUint64(t.recs, math.Float64bits(v))
		t.recs = binary.AppendUvarint(t.recs, uint64(len(term)))
		t.recs = append(t.recs, term...)
		t.total += v
		t.sq += v * v
	})
	if err != nil {
		return nil, err
	}
	// At most half full, so that a missing term's probe ends soon.
	n := 1 << bits.Len(uint(2*len(offs)))
	t.slots = make([]uint64, 2*n)
	mask := uint64(n - 1)
	for _, off := range offs {
		v, term, _ := t.record(int(off))
		h := termHash(string(term))
		a, b := filterBits(h)
		t.filter[a>>6] |= 1 << (a & 63)
		t.filter[b>>6] |= 1 << (b & 63)
		i := h & mask
		for t.slots[2*i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[2*i], t.slots[2*i+1] = termKey(string(term), h, off+1), math.Float64bits(v)
	}
	return t, nil
}

// termSeed seeds the hashes of terms in tables and in queries alike.
var termSeed = maphash.MakeSeed()

// termHash is the hash a termTable places term by.
func termHash(term string) uint64 { return maphash.String(termSeed, term) }

// windowTables returns the table of every candidate's stored term
// counts (windowTerms), nil where it has none, once per window however
// many stages ask: callers must not modify them.
func windowTables(ctx context.Context, p rerank.Payloads, cands []rerank.Candidate) ([]*termTable, error) {
	return termsPayload(p).tables(ctx, cands, termCounts)
}

// termsPayload is the reader of the stored term counts in p (nil: none).
func termsPayload(p rerank.Payloads) storedPayload {
	return storedPayload{payloads: p, name: index.TermsPayload, model: termsModel}
}

// termsModel is the ID of the model writing the stored term counts,
// formatted once rather than at every window's read.
var termsModel = (index.TermsEncoder{}).ModelID()

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
