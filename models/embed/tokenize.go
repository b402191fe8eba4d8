package embed

import (
	"regexp"

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
	text = urlRE.ReplaceAllString(text, " ")
	text = tagRE.ReplaceAllString(text, " ")
	return analyzers.Words(text)
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
