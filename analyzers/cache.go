package analyzers

import (
	"hash/maphash"
	"sync"
)

// Rerank stages analyze the same candidate texts query after query (a
// popular document is a candidate for many queries), and analysis is most
// of a lexical stage's cost. A Cache memoises an analysis by a hash of the
// text in a bounded two-generation map: when the young generation fills,
// it becomes the old one and the previous old one is dropped, which keeps
// recently used entries at O(1) cost without LRU bookkeeping.

// CacheSize is the number of texts each cache generation holds.
const CacheSize = 1 << 15

// Cache memoises an analysis function; it is safe for concurrent use.
type Cache struct {
	analyze    func(string) []string
	mu         sync.Mutex
	seed       maphash.Seed
	young, old map[uint64][]string
}

// NewCache returns a cache of analyze's results.
func NewCache(analyze func(string) []string) *Cache {
	return &Cache{analyze: analyze, seed: maphash.MakeSeed(), young: map[uint64][]string{}}
}

var tokens = NewCache(Tokens)

// CachedTokens returns Tokens(text), from the cache when text was analyzed
// recently. The returned slice is shared: callers must not modify it.
func CachedTokens(text string) []string {
	return tokens.Tokens(text)
}

// ResetCache empties CachedTokens' cache (for cold-cache benchmarks).
func ResetCache() { tokens.Reset() }

// Reset empties the cache.
func (c *Cache) Reset() {
	c.mu.Lock()
	c.young, c.old = map[uint64][]string{}, nil
	c.mu.Unlock()
}

// Tokens returns the analysis of text, from the cache when text was
// analyzed recently. The returned slice is shared: callers must not
// modify it.
func (c *Cache) Tokens(text string) []string {
	h := maphash.String(c.seed, text)
	c.mu.Lock()
	if t, ok := c.young[h]; ok {
		c.mu.Unlock()
		return t
	}
	if t, ok := c.old[h]; ok {
		c.put(h, t)
		c.mu.Unlock()
		return t
	}
	c.mu.Unlock()
	t := c.analyze(text)
	c.mu.Lock()
	c.put(h, t)
	c.mu.Unlock()
	return t
}

func (c *Cache) put(h uint64, t []string) {
	if len(c.young) >= CacheSize {
		c.old, c.young = c.young, make(map[uint64][]string, CacheSize)
	}
	c.young[h] = t
}
