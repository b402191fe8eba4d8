// Package textcache memoises a function of a text. Rerank stages analyze
// the same candidate texts query after query (a popular document is a
// candidate for many queries), and analysis is often most of a stage's
// cost. A Cache keys results by a hash of the text in a bounded
// two-generation map: when the young generation fills, it becomes the old
// one and the previous old one is dropped, which keeps recently used
// entries at O(1) cost without LRU bookkeeping.
package textcache

import (
	"hash/maphash"
	"sync"

	"github.com/semrank/semrank/internal/runs"
)

// Size is the number of texts each generation holds.
const Size = 1 << 15

// Cache memoises a function of text; it is safe for concurrent use. The
// values it returns are shared: callers must not modify them.
type Cache[V any] struct {
	f          func(string) V
	mu         sync.Mutex
	seed       maphash.Seed
	young, old map[uint64]V
}

// New returns a cache of f's results.
func New[V any](f func(string) V) *Cache[V] {
	return &Cache[V]{f: f, seed: maphash.MakeSeed(), young: map[uint64]V{}}
}

// Get returns f(text), from the cache when text was seen recently.
func (c *Cache[V]) Get(text string) V {
	h := maphash.String(c.seed, text)
	c.mu.Lock()
	v, ok := c.lookup(h)
	c.mu.Unlock()
	if ok {
		return v
	}
	v = c.f(text)
	c.mu.Lock()
	c.put(h, v)
	c.mu.Unlock()
	return v
}

// GetAll returns f of each text, as Get does, computing the texts not
// cached on up to GOMAXPROCS goroutines: a stage that meets a window of
// new candidates would otherwise analyze them one after another while
// the other cores wait.
func (c *Cache[V]) GetAll(texts []string) []V {
	out := make([]V, len(texts))
	hs := make([]uint64, len(texts))
	for i, t := range texts {
		hs[i] = maphash.String(c.seed, t)
	}
	var miss []int
	c.mu.Lock()
	for i, h := range hs {
		if v, ok := c.lookup(h); ok {
			out[i] = v
		} else {
			miss = append(miss, i)
		}
	}
	c.mu.Unlock()
	if len(miss) == 0 {
		return out
	}
	runs.Each(len(miss), func(k int) error {
		out[miss[k]] = c.f(texts[miss[k]])
		return nil
	})
	c.mu.Lock()
	for _, i := range miss {
		c.put(hs[i], out[i])
	}
	c.mu.Unlock()
	return out
}

// lookup returns the value of hash h and whether the cache holds it,
// moving it to the young generation from the old; c.mu must be held.
func (c *Cache[V]) lookup(h uint64) (V, bool) {
	if v, ok := c.young[h]; ok {
		return v, true
	}
	v, ok := c.old[h]
	if ok {
		c.put(h, v)
	}
	return v, ok
}

// Put keeps v as f(text), for a caller that computed it along with
// something else; v must be what f(text) returns.
func (c *Cache[V]) Put(text string, v V) {
	h := maphash.String(c.seed, text)
	c.mu.Lock()
	c.put(h, v)
	c.mu.Unlock()
}

// Delete drops text's value, if the cache holds it.
func (c *Cache[V]) Delete(text string) {
	h := maphash.String(c.seed, text)
	c.mu.Lock()
	delete(c.young, h)
	delete(c.old, h)
	c.mu.Unlock()
}

// Reset empties the cache.
func (c *Cache[V]) Reset() {
	c.mu.Lock()
	c.young, c.old = map[uint64]V{}, nil
	c.mu.Unlock()
}

func (c *Cache[V]) put(h uint64, v V) {
	if len(c.young) >= Size {
		c.old, c.young = c.young, make(map[uint64]V, Size)
	}
	c.young[h] = v
}
