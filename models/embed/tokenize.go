package embed

import (
	"regexp"
	"strings"

	"github.com/semrank/semrank/analyzers"
)

var (
	urlRE = regexp.MustCompile(`(?i)\b(?:https?://|ftp://|www\.)\S+`)
	tagRE = regexp.MustCompile(`<[^<>\n]{0,200}>`)
)

// Tokenize returns the words of text as the word-vector models see them:
// URLs and markup/code tags removed, then lowercased, stop words removed,
// not stemmed (analyzers.Words).
func Tokenize(text string) []string {
	// Most texts hold neither a URL nor a tag; the regular expressions
	// run only where one can match, and then as before.
	if mayHoldURL(text) {
		text = urlRE.ReplaceAllString(text, " ")
	}
	if strings.IndexByte(text, '<') >= 0 {
		text = tagRE.ReplaceAllString(text, " ")
	}
	return analyzers.Words(text)
}

// mayHoldURL reports whether urlRE can match in text: every match holds
// "://" or "www." in any case.
func mayHoldURL(text string) bool {
	if strings.Contains(text, "://") {
		return true
	}
	for s := text; ; {
		i := strings.IndexByte(s, '.')
		if i < 0 {
			return false
		}
		if i >= 3 && strings.EqualFold(s[i-3:i], "www") {
			return true
		}
		s = s[i+1:]
	}
}

// Sentences tokenizes texts for training, skipping exact duplicate texts
// (SemEval repeats each original question once per thread) and texts with
// no words.
func Sentences(texts []string) [][]string {
	seen := make(map[string]bool, len(texts))
	var out [][]string
	for _, t := range texts {
		if seen[t] {
			continue
		}
		seen[t] = true
		if ws := Tokenize(t); len(ws) > 0 {
			out = append(out, ws)
		}
	}
	return out
}
