package analyzers

import (
	"hash/maphash"
	"sync"
)

// Rerank stages analyze the same candidate texts query after query (a
// popular document is a candidate for many queries), and analysis is most
// of a lexical stage's cost. CachedTokens memoises Tokens by a hash of the
// text in a bounded two-generation cache: when the young generation fills,
// it becomes the old one and the previous old one is dropped, which keeps
// recently used entries at O(1) cost without LRU bookkeeping.

// CacheSize is the number of texts each cache generation holds.
const CacheSize = 1 << 15

type tokenCache struct {
	mu         sync.Mutex
	seed       maphash.Seed
	young, old map[uint64][]string
}

var tokens = &tokenCache{seed: maphash.MakeSeed(), young: map[uint64][]string{}}

// CachedTokens returns Tokens(text), from the cache when text was analyzed
// recently. The returned slice is shared: callers must not modify it.
func CachedTokens(text string) []string {
	return tokens.get(text)
}

// ResetCache empties the token cache (for cold-cache benchmarks).
func ResetCache() {
	tokens.mu.Lock()
	tokens.young, tokens.old = map[uint64][]string{}, nil
	tokens.mu.Unlock()
}

func (c *tokenCache) get(text string) []string {
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
	t := Tokens(text)
	c.mu.Lock()
	c.put(h, t)
	c.mu.Unlock()
	return t
}

func (c *tokenCache) put(h uint64, t []string) {
	if len(c.young) >= CacheSize {
		c.old, c.young = c.young, make(map[uint64][]string, CacheSize)
	}
	c.young[h] = t
}
