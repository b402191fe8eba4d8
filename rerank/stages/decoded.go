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
	m     map[string]map[string]*decodedEntry // by kind (see get), then document id
	// bySrc finds an entry by the first byte of the payload it was
	// decoded from, without reading a document id: the entry keeps the
	// bytes, so no other payload can begin there while it is held.
	bySrc map[*byte]*decodedEntry
}

// decodedEntry is one payload decoded.
type decodedEntry struct {
	kind string // see get
	src  []byte // the payload decoded, as last read (guarded by decodedPayloads.mu)
	sum  uint64 // src's hash
	v    any
	size int // bytes v holds
}

// decodedBudget bounds the bytes the cache holds.
const decodedBudget = 16 << 20

// decoded is the process's cache: a decoded payload depends on the
// payload's bytes alone, so every stage and index shares it.
var decoded = &decodedPayloads{seed: maphash.MakeSeed(), m: map[string]map[string]*decodedEntry{}, bySrc: map[*byte]*decodedEntry{}}

// get returns each of payloads, the payloads of kind (a payload name and
// what they decode to) of the documents ids (nil where a document has
// none, and there a nil value), decoded by decode, which returns the
// value and the bytes it holds; those it does not hold are decoded and
// kept.
func (c *decodedPayloads) get(kind string, ids []string, payloads [][]byte, decode func([]byte) (any, int, error)) ([]any, error) {
	out := make([]any, len(ids))
	var check []int // payloads not known to be their entries' bytes
	c.mu.Lock()
	for i, b := range payloads {
		if b == nil {
			continue
		}
		if e := c.bySrc[first(b)]; e != nil && e.kind == kind && len(e.src) == len(b) {
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
	m := c.m[kind]
	for j, i := range check {
		if e := m[ids[i]]; e != nil && e.sum == sums[j] && len(e.src) == len(payloads[i]) {
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
		built[j] = &decodedEntry{kind: kind, src: payloads[i], sum: sums[j], v: v, size: size + len(payloads[i])}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, i := range check {
		if e := held[j]; e != nil {
			// The same payload in other bytes: known by them next time.
			delete(c.bySrc, first(e.src))
			e.src, out[i] = payloads[i], e.v
			if k := first(e.src); k != nil {
				c.bySrc[k] = e
			}
			continue
		}
		e := built[j]
		out[i] = e.v
		if c.bytes += e.size; c.bytes > decodedBudget {
			c.m, c.bySrc, c.bytes = map[string]map[string]*decodedEntry{}, map[*byte]*decodedEntry{}, e.size
		}
		if c.m[kind] == nil {
			c.m[kind] = map[string]*decodedEntry{}
		}
		if old := c.m[kind][ids[i]]; old != nil {
			delete(c.bySrc, first(old.src))
		}
		c.m[kind][ids[i]] = e
		if k := first(e.src); k != nil {
			c.bySrc[k] = e
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
