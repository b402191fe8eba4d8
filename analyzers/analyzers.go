// Package analyzers registers the one English analyzer semrank uses with
// Bleve and exposes the same token stream to the rest of the module.
//
// Every binary that opens a semrank index imports this package (directly or
// through package index), so the analyzer named by Name is always registered
// under the same name with the same chain:
//
//	unicode tokenizer → possessive_en → to_lower → stop_en → stemmer_porter
//
// (the tokenizer and to_lower with two repairs: see unicode.go)
//
// Index-time and query-time text therefore produce identical terms, and the
// learned models (which see terms through Tokens or Terms) agree with Bleve's
// postings about what a term is. Across releases, each analyzer's behaviour
// has a version (Version, WordsVersion): saved models record it (ID,
// WordsID) and refuse to load under an analyzer that changed since.
package analyzers

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/registry"
)

// Name is the name under which the semrank English analyzer is registered
// with Bleve's global registry.
const Name = "semrank_en"

// WordsName is a companion analyzer without stemming, for models that look
// words up in a vocabulary of surface forms (word vectors, topic models).
const WordsName = "semrank_en_words"

func init() {
	if err := registry.RegisterAnalyzer(Name, newStemmed); err != nil {
		panic(err)
	}
	if err := registry.RegisterAnalyzer(WordsName, newWords); err != nil {
		panic(err)
	}
}

func newChain(cache *registry.Cache, filters ...string) (analysis.Analyzer, error) {
	tok, err := cache.TokenizerNamed(tokenizerName)
	if err != nil {
		return nil, err
	}
	a := &analysis.DefaultAnalyzer{Tokenizer: tok}
	for _, name := range filters {
		f, err := cache.TokenFilterNamed(name)
		if err != nil {
			return nil, fmt.Errorf("analyzers: token filter %q: %w", name, err)
		}
		a.TokenFilters = append(a.TokenFilters, f)
	}
	return a, nil
}

func newStemmed(_ map[string]interface{}, cache *registry.Cache) (analysis.Analyzer, error) {
	return newChain(cache, en.PossessiveName, lowerName, en.StopName, porter.Name)
}

func newWords(_ map[string]interface{}, cache *registry.Cache) (analysis.Analyzer, error) {
	return newChain(cache, en.PossessiveName, lowerName, en.StopName)
}

var (
	once              sync.Once
	stemmed, unstemmd analysis.Analyzer
	initErr           error
)

func load() {
	cache := registry.NewCache()
	stemmed, initErr = cache.AnalyzerNamed(Name)
	if initErr == nil {
		unstemmd, initErr = cache.AnalyzerNamed(WordsName)
	}
}

func analyzer(words bool) analysis.Analyzer {
	once.Do(load)
	if initErr != nil {
		// The chain is built from filters compiled into Bleve itself; failing
		// here means the binary was built against an incompatible Bleve.
		panic("analyzers: cannot build analyzer: " + initErr.Error())
	}
	if words {
		return unstemmd
	}
	return stemmed
}

// Tokens returns the index terms of text, exactly as Bleve indexes them.
func Tokens(text string) []string {
	return collect(analyzer(false).Analyze([]byte(text)))
}

// Words returns the lowercased, stop-filtered but unstemmed words of text.
func Words(text string) []string {
	return collect(analyzer(true).Analyze([]byte(text)))
}

func collect(ts analysis.TokenStream) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t.Term)
	}
	return out
}

// Term is one occurrence of an index term in a text, with what the original
// text said about it: learned term-weighting functions (TWEAK) use the
// position and the capitalisation of the surface form as features, and
// the offset tells which part of a joined text (a title, then a body) a
// term came from.
type Term struct {
	Term     string // the analyzed term, as indexed
	Position int    // 1-based position among the text's tokens (before stop removal)
	Capital  bool   // the surface form starts with an upper-case letter
	Start    int    // byte offset of the surface form in the text
}

// Terms analyzes text and returns every term occurrence in order.
func Terms(text string) []Term {
	a := Analyze(text)
	out := make([]Term, len(a.Tokens))
	for i := range out {
		out[i] = a.Term(i)
	}
	return out
}

// Analysis is a text's analysis by the stemmed analyzer: its terms in
// order, as Tokens returns them, and where the text holds each. It is what
// CachedAnalysis shares between the callers that need only the terms
// (CachedTokens) and those that need positions and capitals (TWEAK), so
// that a document is analyzed once for all of its payloads.
type Analysis struct {
	Tokens []string // the index terms in order; shared, callers must not modify it
	occ    []occurrence
}

// occurrence is what Term adds to a token.
type occurrence struct {
	position, start int
	capital         bool
}

// Analyze analyzes text with the stemmed analyzer (as Tokens and Terms do).
func Analyze(text string) Analysis {
	// Token filters rewrite terms in place, and terms alias the input, so the
	// analyzer gets its own copy and capitalisation is read from text.
	ts := analyzer(false).Analyze([]byte(text))
	a := Analysis{Tokens: make([]string, len(ts)), occ: make([]occurrence, len(ts))}
	for i, t := range ts {
		a.Tokens[i] = string(t.Term)
		a.occ[i] = occurrence{position: t.Position, start: t.Start, capital: startsUpper(text, t.Start)}
	}
	return a
}

// startsUpper reports whether the rune at byte offset i of text is upper
// case.
func startsUpper(text string, i int) bool {
	if i < 0 || i >= len(text) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return unicode.IsUpper(r)
}

// Term returns the i-th term occurrence of the text, 0 ≤ i < len(a.Tokens).
func (a Analysis) Term(i int) Term {
	o := a.occ[i]
	return Term{Term: a.Tokens[i], Position: o.position, Capital: o.capital, Start: o.start}
}

// Parts is the analysis of a text joined from parts by line breaks, as
// dataset.Doc.FullText joins a title and a body (an empty part is left
// out, with its break): each part's token stream, which is what Bleve's
// analysis of a field holding the part gives, and the analysis of the
// joined text, put together from the streams. Indexing a document then
// analyzes its text once, for Bleve's fields and its payloads alike: a line
// break ends every token, so the joined text's tokens are the parts' in
// turn, their positions and offsets moved past the parts before.
type Parts struct {
	Streams []analysis.TokenStream // one per part, in order; their terms alias a copy of the text
	Text    string                 // the parts joined
	Joined  Analysis               // the analysis of Text
}

// AnalyzeParts analyzes each part with the stemmed analyzer and returns the
// streams and the analysis of the parts joined, which it also keeps in the
// cache of CachedTokens and CachedAnalysis for the joined text.
func AnalyzeParts(parts ...string) Parts {
	out := Parts{Streams: make([]analysis.TokenStream, len(parts))}
	var joined []string
	for _, p := range parts {
		if p != "" {
			joined = append(joined, p)
		}
	}
	text := strings.Join(joined, "\n")
	out.Text = text
	a, ok := analyzer(false).(*analysis.DefaultAnalyzer)
	if !ok || a.CharFilters != nil {
		// Not the chain newChain builds: analyze each part and the joined
		// text apart.
		for i, p := range parts {
			out.Streams[i] = analyzer(false).Analyze([]byte(p))
		}
		out.Joined = Analyze(text)
		analyses.Put(text, out.Joined)
		return out
	}
	raw := make([]int, len(parts)) // each part's tokens, stop words included
	n := 0
	for i, p := range parts {
		if p == "" {
			continue
		}
		ts := a.Tokenizer.Tokenize([]byte(p))
		raw[i] = len(ts)
		for _, f := range a.TokenFilters {
			ts = f.Filter(ts)
		}
		out.Streams[i] = compact(ts)
		n += len(ts)
	}
	out.Joined = Analysis{Tokens: make([]string, 0, n), occ: make([]occurrence, 0, n)}
	offset, shift := 0, 0
	for i, p := range parts {
		if p == "" {
			continue
		}
		for _, t := range out.Streams[i] {
			out.Joined.Tokens = append(out.Joined.Tokens, string(t.Term))
			out.Joined.occ = append(out.Joined.occ, occurrence{
				position: t.Position + shift,
				start:    t.Start + offset,
				capital:  startsUpper(p, t.Start),
			})
		}
		offset += len(p) + 1
		shift += raw[i]
	}
	analyses.Put(text, out.Joined)
	return out
}

// compact returns ts with its tokens copied into an array of their own
// size. The tokenizer allocates tokens by a guess of how many the text
// holds, often several times too many for a short text; a stream that is
// kept for a while (Add keeps a few thousand documents' ahead of Bleve)
// should not hold the rest.
func compact(ts analysis.TokenStream) analysis.TokenStream {
	toks := make([]analysis.Token, len(ts))
	out := make(analysis.TokenStream, len(ts))
	for i, t := range ts {
		toks[i] = *t
		out[i] = &toks[i]
	}
	return out
}
