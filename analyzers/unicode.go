package analyzers

import (
	"bytes"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	bunicode "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/registry"
)

// Two repairs to Bleve's stages, kept in the chain under their own names
// so that index and query time still share one analyzer.
const (
	// tokenizerName: Bleve's unicode tokenizer stops at the first invalid
	// UTF-8 byte and drops the rest of the text; this one first turns
	// each invalid byte into a space, which keeps every offset.
	tokenizerName = "semrank_unicode"
	// lowerName: Bleve's to_lower moves no byte after a rune whose lower
	// case is shorter (İ, ẞ, the Kelvin and Ohm signs), leaving an invalid
	// term ("İstanbul" → "i\xb0stanbu"); this one gives the same terms
	// otherwise.
	lowerName = "semrank_to_lower"
)

func init() {
	if err := registry.RegisterTokenizer(tokenizerName, func(map[string]interface{}, *registry.Cache) (analysis.Tokenizer, error) {
		return validTokenizer{bunicode.NewUnicodeTokenizer()}, nil
	}); err != nil {
		panic(err)
	}
	if err := registry.RegisterTokenFilter(lowerName, func(map[string]interface{}, *registry.Cache) (analysis.TokenFilter, error) {
		return lowerFilter{}, nil
	}); err != nil {
		panic(err)
	}
}

type validTokenizer struct{ analysis.Tokenizer }

func (t validTokenizer) Tokenize(input []byte) analysis.TokenStream {
	if !utf8.Valid(input) {
		fixed := make([]byte, len(input))
		for i := 0; i < len(input); {
			r, w := utf8.DecodeRune(input[i:])
			if r == utf8.RuneError && w == 1 {
				fixed[i] = ' '
			} else {
				copy(fixed[i:], input[i:i+w])
			}
			i += w
		}
		input = fixed
	}
	return t.Tokenizer.Tokenize(input)
}

type lowerFilter struct{}

func (lowerFilter) Filter(input analysis.TokenStream) analysis.TokenStream {
	for _, token := range input {
		token.Term = toLower(token.Term)
	}
	return input
}

// toLower returns s in lower case, as Bleve's to_lower means to: a Σ
// ending a term becomes the final form ς. Terms already in lower-case
// ASCII, nearly all of them, are returned as they are.
func toLower(s []byte) []byte {
	lower := true
	for _, b := range s {
		if b >= utf8.RuneSelf || 'A' <= b && b <= 'Z' {
			lower = false
			break
		}
	}
	if lower {
		return s
	}
	l := bytes.ToLower(s)
	if bytes.HasSuffix(s, []byte("Σ")) {
		l = append(l[:len(l)-len("σ")], "ς"...)
	}
	return l
}
