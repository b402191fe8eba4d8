package quality

import (
	"regexp"
	"strings"
	"unicode"
)

var (
	urlRE     = regexp.MustCompile(`(?i)\b(?:https?://|ftp://|www\.)\S+`)
	emailRE   = regexp.MustCompile(`\S+@\S+\.\w+`)
	mentionRE = regexp.MustCompile(`@\w+`)
	smileyRE  = regexp.MustCompile(`[:;]-?[()DPp]`)
)

// Tokens splits text the way the quality model reads it: lowercased runs of
// letters, digits and apostrophes, with numbers as <num>; links, e-mail
// addresses, @-mentions and smileys as <url>, <email>, <at> and <smiley>;
// "?" and "!" as tokens of their own (runs collapse to one).
func Tokens(text string) []string {
	// NUL marks the special tokens below; it never comes from the text.
	text = strings.ReplaceAll(text, "\x00", " ")
	// The regexps run only where their match is possible: most comments
	// have no link, address or smiley, and the scans dominate otherwise.
	if strings.Contains(text, "://") || containsFold(text, "www.") {
		text = urlRE.ReplaceAllString(text, " \x00url ")
	}
	if strings.Contains(text, "@") {
		text = emailRE.ReplaceAllString(text, " \x00email ")
		text = mentionRE.ReplaceAllString(text, " \x00at ")
	}
	if strings.ContainsAny(text, ":;") {
		text = smileyRE.ReplaceAllString(text, " \x00smiley ")
	}
	var out []string
	var word strings.Builder
	special := false
	flush := func() {
		if word.Len() == 0 {
			return
		}
		w := strings.Trim(word.String(), "'")
		word.Reset()
		if w == "" {
			special = false
			return
		}
		switch {
		case special:
			w = "<" + w + ">"
		case isNumber(w):
			w = "<num>"
		}
		out = append(out, w)
		special = false
	}
	var last rune
	for _, r := range text {
		switch {
		case r == 0:
			flush()
			special = true
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'':
			word.WriteRune(unicode.ToLower(r))
		default:
			flush()
			if (r == '?' || r == '!') && r != last {
				out = append(out, string(r))
			}
		}
		if !unicode.IsSpace(r) {
			last = r
		}
	}
	flush()
	return out
}

// containsFold reports whether s contains sub, ignoring ASCII case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// Features returns the distinct features of text: its tokens; with
// bigrams, its adjacent token pairs joined by a space; with chars, the
// character 3-, 4- and 5-grams of its tokens joined by spaces (prefixed
// "#", which no token contains), which catch misspellings and word forms
// that forum text is full of; then the context features given.
func Features(text string, bigrams, chars bool, context ...string) []string {
	toks := Tokens(text)
	seen := make(map[string]bool, 2*len(toks))
	out := make([]string, 0, 2*len(toks))
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for i, t := range toks {
		add(t)
		if bigrams && i > 0 {
			add(toks[i-1] + " " + t)
		}
	}
	if chars {
		r := []rune(" " + strings.Join(toks, " ") + " ")
		for n := 3; n <= 5; n++ {
			for i := 0; i+n <= len(r); i++ {
				add("#" + string(r[i:i+n]))
			}
		}
	}
	for _, c := range context {
		add(c)
	}
	return out
}
