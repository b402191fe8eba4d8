package stages

import (
	"context"
	"fmt"
	"hash/maphash"
	"math/bits"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// termTable is one document's stored term counts (index.TermsPayload)
// laid out so that a query's few terms are found by hashing, not by a
// scan of every term the document holds: the lexical stages read the
// same documents query after query, and decoding and scanning each
// candidate's term list was most of their time. Built once from a
// payload, it is read-only but for its cached norm.
type termTable struct {
	sum    uint64   // the payload's hash (termTables.seed), with its length telling it from another
	length int      // the payload's length
	total  int      // tokens: the counts' sum
	terms  string   // the terms in sorted order, concatenated
	ends   []uint32 // where each term ends in terms
	counts []int32
	// slots places the terms by hash, open addressing: a term's index + 1
	// in the low 32 bits, 0 for an empty slot, and its hash's high 32 bits
	// above, which tell most other terms apart without reading either.
	slots []uint64
	norm  atomic.Pointer[tableNorm]
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

// count returns how often term, whose hash is h (termHash), occurs in the
// document.
func (t *termTable) count(term string, h uint64) int {
	mask, tag := uint64(len(t.slots)-1), h>>32
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return 0
		}
		if j := int(uint32(s)) - 1; s>>32 == tag && t.term(j) == term {
			return int(t.counts[j])
		}
	}
}

// size is what the table holds, in bytes, as termTables budgets it.
func (t *termTable) size() int {
	const header = 128 // the struct and its slices' headers
	return header + len(t.terms) + 4*(len(t.ends)+len(t.counts)) + 8*len(t.slots)
}

// newTermTable builds the table of b, a terms payload whose hash is sum;
// a malformed b is index.EachTermCount's error.
func newTermTable(b []byte, sum uint64) (*termTable, error) {
	t := &termTable{sum: sum, length: len(b)}
	var terms []byte
	err := index.EachTermCount(b, func(n int) {
		terms = make([]byte, 0, len(b))
		t.ends = make([]uint32, 0, n)
		t.counts = make([]int32, 0, n)
	}, func(term []byte, c int) {
		terms = append(terms, term...)
		t.ends = append(t.ends, uint32(len(terms)))
		t.counts = append(t.counts, int32(c))
		t.total += c
	})
	if err != nil {
		return nil, err
	}
	t.terms = string(terms)
	// At most half full, so that a missing term's probe ends soon.
	t.slots = make([]uint64, 1<<bits.Len(uint(2*len(t.ends))))
	mask := uint64(len(t.slots) - 1)
	for i := range t.ends {
		h := termHash(t.term(i))
		j := h & mask
		for t.slots[j] != 0 {
			j = (j + 1) & mask
		}
		t.slots[j] = h>>32<<32 | uint64(i+1)
	}
	return t, nil
}

// termSeed seeds the hashes of terms in tables and in queries alike.
var termSeed = maphash.MakeSeed()

// termHash is the hash a termTable places term by.
func termHash(term string) uint64 { return maphash.String(termSeed, term) }

// termTables is a bounded cache of documents' term tables, keyed by
// document id and checked against a hash of the payload each was built
// from, so a document written again is seen to have changed. It holds at
// most tableBudget bytes of tables; when full, it starts again empty. It
// is safe for concurrent use.
type termTables struct {
	mu    sync.Mutex
	seed  maphash.Seed
	bytes int
	m     map[string]*termTable
}

// tableBudget bounds the bytes of tables the cache holds.
const tableBudget = 32 << 20

// tables is the process's cache of term tables: a table depends on its
// payload's bytes alone, so every stage and index shares it.
var tables = &termTables{seed: maphash.MakeSeed(), m: map[string]*termTable{}}

// get returns the table of each of payloads, the terms payloads of the
// documents ids (nil where a document has none, and there a nil table),
// building and caching those it does not hold.
func (c *termTables) get(ids []string, payloads [][]byte) ([]*termTable, error) {
	out := make([]*termTable, len(ids))
	sums := make([]uint64, len(ids))
	for i, b := range payloads {
		if b != nil {
			sums[i] = maphash.Bytes(c.seed, b)
		}
	}
	missing := 0
	c.mu.Lock()
	for i, b := range payloads {
		if b == nil {
			continue
		}
		if t := c.m[ids[i]]; t != nil && t.sum == sums[i] && t.length == len(b) {
			out[i] = t
		} else {
			missing++
		}
	}
	c.mu.Unlock()
	if missing == 0 {
		return out, nil
	}
	built := make([]*termTable, 0, missing)
	for i, b := range payloads {
		if b == nil || out[i] != nil {
			continue
		}
		t, err := newTermTable(b, sums[i])
		if err != nil {
			return nil, fmt.Errorf("document %s: %w", ids[i], err)
		}
		out[i] = t
		built = append(built, t)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := 0
	for i, t := range out {
		if k < len(built) && t == built[k] {
			k++
			if c.bytes += t.size(); c.bytes > tableBudget {
				c.m, c.bytes = map[string]*termTable{}, t.size()
			}
			c.m[ids[i]] = t
		}
	}
	return out, nil
}

// windowTables returns the term table of every candidate's stored term
// counts (windowTerms), nil where it has none, once per window however
// many stages ask (rerank.WindowMemo): callers must not modify them.
func windowTables(ctx context.Context, p rerank.Payloads, cands []rerank.Candidate) ([]*termTable, error) {
	compute := func() (any, error) {
		stored, err := windowTerms(ctx, p, cands)
		if err != nil {
			return nil, err
		}
		return tables.get(rerank.IDs(cands), stored)
	}
	// As rerank.ReadWindowPayloads keys the window's payloads.
	type key struct {
		p           rerank.Payloads
		n           int
		first, last string
	}
	memo := rerank.WindowMemoOf(ctx)
	if p == nil || len(cands) == 0 || !reflect.TypeOf(p).Comparable() {
		memo = nil
	}
	k := key{p: p, n: len(cands)}
	if len(cands) > 0 {
		k.first, k.last = cands[0].ID, cands[len(cands)-1].ID
	}
	v, err := memo.Do(k, compute)
	if err != nil {
		return nil, err
	}
	return v.([]*termTable), nil
}
