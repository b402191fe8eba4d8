package analyzers

import (
	"reflect"
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

// FuzzAnalyzeParts: the parts' streams are what the analyzer gives each
// part, as Bleve's analysis of its field would be, and the analysis put
// together from them is that of the joined text, token for token (terms,
// positions, offsets, capitals), whatever a part ends or starts with.
func FuzzAnalyzeParts(f *testing.F) {
	for _, s := range [][2]string{
		{"Visa rules", "for the Qatar visa"}, {"", "body only"}, {"title only", ""}, {"", ""},
		{"The bank's", "bank's RATES"}, {"rate.", ".rate"}, {"caf\xc3", "\xa9 café"}, {"e\u0301", "\u0301e"},
		{"x\r", "\ny"}, {"3.", "5 3.5"}, {"a\u200d", "\u200db"}, {"🇶", "🇦 flag"}, {"of the", "the of"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, title, body string) {
		joined := title
		switch {
		case title == "":
			joined = body
		case body != "":
			joined = title + "\n" + body
		}
		p := AnalyzeParts(title, body)
		if want := Analyze(joined); !reflect.DeepEqual(p.Joined, want) {
			t.Fatalf("AnalyzeParts(%q, %q).Joined =\n%+v\nanalyzing the joined text gives\n%+v", title, body, p.Joined, want)
		}
		if got := CachedAnalysis(joined); !reflect.DeepEqual(got, p.Joined) {
			t.Fatalf("CachedAnalysis(%q) = %+v after AnalyzeParts, want %+v", joined, got, p.Joined)
		}
		for i, part := range []string{title, body} {
			want := analyzer(false).Analyze([]byte(part))
			if len(p.Streams[i]) != len(want) {
				t.Fatalf("part %d (%q): %d tokens, the analyzer gives %d", i, part, len(p.Streams[i]), len(want))
			}
			for k := range want {
				if !reflect.DeepEqual(*p.Streams[i][k], *want[k]) {
					t.Fatalf("part %d (%q) token %d = %+v, the analyzer gives %+v", i, part, k, *p.Streams[i][k], *want[k])
				}
			}
		}
	})
}
