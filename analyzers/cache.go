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

var analyses = textcache.New(Analyze)

// CachedTokens returns Tokens(text), from the cache when text was analyzed
// recently. The returned slice is shared: callers must not modify it.
func CachedTokens(text string) []string {
	return analyses.Get(text).Tokens
}

// CachedAnalysis returns Analyze(text), from the same cache as
// CachedTokens: the payload encoders of one document (term counts, TWEAK,
// concept vectors) analyze its text once between them. The returned
// analysis is shared: callers must not modify it.
func CachedAnalysis(text string) Analysis {
	return analyses.Get(text)
}

// Forget drops text's analysis from the cache of CachedTokens and
// CachedAnalysis: indexing, which analyzes each document once
// (AnalyzeParts) for encoders that run right after, need not keep tens of
// thousands of analyses in the heap that no one will ask for again.
func Forget(text string) { analyses.Delete(text) }

// ResetCache empties the cache of CachedTokens and CachedAnalysis (for
// cold-cache benchmarks).
func ResetCache() { analyses.Reset() }

// Reset empties the cache.
func (c *Cache) Reset() { c.c.Reset() }

// Tokens returns the analysis of text, from the cache when text was
// analyzed recently. The returned slice is shared: callers must not
// modify it.
func (c *Cache) Tokens(text string) []string { return c.c.Get(text) }
