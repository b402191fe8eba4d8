package analyzers

import "github.com/semrank/semrank/internal/textcache"

// CacheSize is the number of texts each cache generation holds.
const CacheSize = textcache.Size

// Cache memoises an analysis function (see package textcache); it is safe
// for concurrent use.
type Cache struct{ c *textcache.Cache[[]string] }

// NewCache returns a cache of analyze's results.
func NewCache(analyze func(string) []string) *Cache {
	return &Cache{textcache.New(analyze)}
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
func (c *Cache) Reset() { c.c.Reset() }

// Tokens returns the analysis of text, from the cache when text was
// analyzed recently. The returned slice is shared: callers must not
// modify it.
func (c *Cache) Tokens(text string) []string { return c.c.Get(text) }
