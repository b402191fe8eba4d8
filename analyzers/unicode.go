package analyzers

import (
	"bytes"
	"unicode"
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
		return validTokenizer{asciiFirst{bunicode.NewUnicodeTokenizer()}}, nil
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
// ending a term becomes the final form ς. It lowers in place, as Bleve's
// filter does, unless a lower case differs in width from its capital;
// then it lowers a copy.
func toLower(s []byte) []byte {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				s[i] = c + 'a' - 'A'
			}
			i++
			continue
		}
		r, w := utf8.DecodeRune(s[i:])
		l := unicode.ToLower(r)
		if r == 'Σ' && i+w == len(s) {
			l = 'ς'
		}
		if l != r {
			if utf8.RuneLen(l) != w {
				return lowerCopy(s)
			}
			utf8.EncodeRune(s[i:], l)
		}
		i += w
	}
	return s
}

// lowerCopy is toLower for terms whose lower case changes width.
func lowerCopy(s []byte) []byte {
	l := bytes.ToLower(s)
	if bytes.HasSuffix(s, []byte("Σ")) {
		l = append(l[:len(l)-len("σ")], "ς"...)
	}
	return l
}
