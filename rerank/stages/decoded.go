package stages

import (
	"context"
	"fmt"
	"hash/maphash"
	"reflect"
	"sync"

	"github.com/semrank/semrank/rerank"
)

// decodedPayloads is a bounded cache of documents' payloads decoded into
// the form a stage scores from (a term table, a dense vector), keyed by
// payload and document id. Stages read the same documents query
// after query; decoding their payloads again each window was a large part
// of their time. An entry serves a payload when it is the bytes the entry
// was decoded from (payload stores hand out the payloads they hold, see
// rerank.ReadWindowPayloads), else when it hashes as they did, so a
// document written again is decoded again. It holds at most decodedBudget
// bytes; when full, it starts again empty. It is safe for concurrent use.
type decodedPayloads struct {
	mu    sync.Mutex
	seed  maphash.Seed
	bytes int
	kinds map[string]*decodedKind // see get
}

// decodedKind holds the entries of one kind of decoded payload.
type decodedKind struct {
	byID map[string]*decodedEntry
	// bySrc finds an entry's value by the first byte of the payload it
	// was decoded from, without reading a document id or the entry: the
	// entry keeps the bytes, so no other payload can begin there while
	// it is held.
	bySrc map[*byte]decodedValue
}

// decodedEntry is one payload decoded.
type decodedEntry struct {
	src []byte // the payload decoded, as last read (guarded by decodedPayloads.mu)
	sum uint64 // src's hash
	decodedValue
	size int // bytes v holds
}

// decodedValue is a decoded payload and the length of its bytes.
type decodedValue struct {
	v any
	n int
}

// decodedBudget bounds the bytes the cache holds.
const decodedBudget = 16 << 20

// decoded is the process's cache: a decoded payload depends on the
// payload's bytes alone, so every stage and index shares it.
var decoded = newDecodedPayloads()

// newDecodedPayloads returns an empty cache.
func newDecodedPayloads() *decodedPayloads {
	return &decodedPayloads{seed: maphash.MakeSeed(), kinds: map[string]*decodedKind{}}
}

// kind returns the entries of kind, made empty when missing; c.mu is held.
func (c *decodedPayloads) kind(kind string) *decodedKind {
	k := c.kinds[kind]
	if k == nil {
		k = &decodedKind{byID: map[string]*decodedEntry{}, bySrc: map[*byte]decodedValue{}}
		c.kinds[kind] = k
	}
	return k
}

// get returns each of payloads, the payloads of kind (a payload name and
// what they decode to) of the documents ids (nil where a document has
// none, and there a nil value), decoded by decode, which returns the
// value and the bytes it holds; those it does not hold are decoded and
// kept.
func (c *decodedPayloads) get(kind string, ids []string, payloads [][]byte, decode func([]byte) (any, int, error)) ([]any, error) {
	out := make([]any, len(ids))
	var check []int // payloads not known to be their entries' bytes
	c.mu.Lock()
	k := c.kind(kind)
	for i, b := range payloads {
		if b == nil {
			continue
		}
		if e, ok := k.bySrc[first(b)]; ok && e.n == len(b) {
			out[i] = e.v
		} else {
			check = append(check, i)
		}
	}
	c.mu.Unlock()
	if len(check) == 0 {
		return out, nil
	}
	sums := make([]uint64, len(check))
	for j, i := range check {
		sums[j] = maphash.Bytes(c.seed, payloads[i])
	}
	held := make([]*decodedEntry, len(check))
	c.mu.Lock()
	k = c.kind(kind)
	for j, i := range check {
		if e := k.byID[ids[i]]; e != nil && e.sum == sums[j] && len(e.src) == len(payloads[i]) {
			held[j] = e
		}
	}
	c.mu.Unlock()
	built := make([]*decodedEntry, len(check))
	for j, i := range check {
		if held[j] != nil {
			continue
		}
		v, size, err := decode(payloads[i])
		if err != nil {
			return nil, fmt.Errorf("document %s: %w", ids[i], err)
		}
		built[j] = &decodedEntry{src: payloads[i], sum: sums[j], decodedValue: decodedValue{v, len(payloads[i])}, size: size + len(payloads[i])}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k = c.kind(kind)
	for j, i := range check {
		if e := held[j]; e != nil {
			out[i] = e.v
			if k.byID[ids[i]] != e {
				continue // the cache started again meanwhile
			}
			// The same payload in other bytes: known by them next time.
			delete(k.bySrc, first(e.src))
			e.src = payloads[i]
			if p := first(e.src); p != nil {
				k.bySrc[p] = e.decodedValue
			}
			continue
		}
		e := built[j]
		out[i] = e.v
		if c.bytes += e.size; c.bytes > decodedBudget {
			c.kinds, c.bytes = map[string]*decodedKind{}, e.size
			k = c.kind(kind)
		}
		if old := k.byID[ids[i]]; old != nil {
			delete(k.bySrc, first(old.src))
		}
		k.byID[ids[i]] = e
		if p := first(e.src); p != nil {
			k.bySrc[p] = e.decodedValue
		}
	}
	return out, nil
}

// decodedWindow returns every candidate's payload s (s.window) decoded
// by decode (see decodedPayloads), the zero T where it has none, once per
// window however many stages ask (rerank.WindowMemo): callers must not
// modify what it returns.
func decodedWindow[T any](ctx context.Context, s storedPayload, cands []rerank.Candidate, decode func([]byte) (T, int, error)) ([]T, error) {
	compute := func() (any, error) {
		stored, err := s.window(ctx, cands)
		if err != nil {
			return nil, err
		}
		// The payload's name and model fix its encoding, and T what it
		// decodes to.
		kind := s.name + "\x00" + s.model + "\x00" + reflect.TypeFor[T]().String()
		vs, err := decoded.get(kind, rerank.IDs(cands), stored, func(b []byte) (any, int, error) { return decode(b) })
		if err != nil {
			return nil, err
		}
		out := make([]T, len(vs))
		for i, v := range vs {
			if v != nil {
				out[i] = v.(T)
			}
		}
		return out, nil
	}
	// As rerank.ReadWindowPayloads keys the window's payloads, and by
	// what they decode to.
	type key struct {
		s           storedPayload
		t           reflect.Type
		n           int
		first, last string
	}
	memo := rerank.WindowMemoOf(ctx)
	if s.payloads == nil || len(cands) == 0 || !reflect.TypeOf(s.payloads).Comparable() {
		memo = nil
	}
	k := key{s: s, t: reflect.TypeFor[T](), n: len(cands)}
	if len(cands) > 0 {
		k.first, k.last = cands[0].ID, cands[len(cands)-1].ID
	}
	v, err := memo.Do(k, compute)
	if err != nil {
		return nil, err
	}
	return v.([]T), nil
}

// first returns the address of b's first byte, nil for an empty b (whose
// address would be shared).
func first(b []byte) *byte {
	if len(b) == 0 {
		return nil
	}
	return &b[0]
}
