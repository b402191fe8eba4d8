package analyzers

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzAnalyzers checks what every consumer of the analyzers relies on, for
// any input, invalid UTF-8 included: no panic; every term is non-empty,
// valid UTF-8, without spaces and lower case (letters such as ℭ
// that have no lower case stay); Terms, CachedTokens and CachedAnalysis
// agree with Tokens; positions and offsets increase, offsets inside the
// text; and Words yields as many terms as Tokens (the same words,
// unstemmed).
func FuzzAnalyzers(f *testing.F) {
	for _, s := range []string{
		"", "The bank's RATES are rising", "İstanbul STRAẞE Kelvin K", "a\xffb\xfe\xfdc", "don&#39;t",
		"visa\u00a0rules\u200bfor\ttheQatar", "東京 في الدوحة", "www.example.com/x?y=1 mail@x.org :-)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Tokens(s)
		for _, tok := range toks {
			if tok == "" || !utf8.ValidString(tok) || strings.ContainsFunc(tok, unicode.IsSpace) {
				t.Fatalf("Tokens(%q): bad term %q", s, tok)
			}
			if strings.ContainsFunc(tok, func(r rune) bool { return unicode.ToLower(r) != r }) {
				t.Fatalf("Tokens(%q): term %q is not lower case", s, tok)
			}
		}
		terms := Terms(s)
		if len(terms) != len(toks) {
			t.Fatalf("Terms(%q) has %d terms, Tokens %d", s, len(terms), len(toks))
		}
		last, lastStart := 0, -1
		a := CachedAnalysis(s)
		for i, tm := range terms {
			if tm.Term != toks[i] {
				t.Fatalf("Terms(%q)[%d] = %q, Tokens says %q", s, i, tm.Term, toks[i])
			}
			if tm.Position <= last {
				t.Fatalf("Terms(%q): position %d after %d", s, tm.Position, last)
			}
			if tm.Start <= lastStart || tm.Start >= len(s) {
				t.Fatalf("Terms(%q): offset %d after %d, in %d bytes", s, tm.Start, lastStart, len(s))
			}
			last, lastStart = tm.Position, tm.Start
			if got := a.Term(i); got != tm {
				t.Fatalf("CachedAnalysis(%q).Term(%d) = %+v, Terms says %+v", s, i, got, tm)
			}
		}
		if cached := CachedTokens(s); strings.Join(cached, " ") != strings.Join(toks, " ") {
			t.Fatalf("CachedTokens(%q) = %q, Tokens %q", s, cached, toks)
		}
		if words := Words(s); len(words) != len(toks) {
			t.Fatalf("Words(%q) = %q, Tokens %q: not the same words", s, words, toks)
		}
	})
}
