package deepmatch

import (
	"github.com/semrank/semrank/analyzers"
)

// Meta tokens are extra "words" describing a candidate rather than its
// content. They join the candidate side's bag, so the topic model places them
// in patches and the network can learn local decisions such as "a comment
// written by the asker, in a thread about visas". Their names cannot be
// produced by the analyzer (its tokenizer never keeps a "#").
const (
	tokAsker = "#asker" // the candidate was written by the query's author
	tokQuery = "#q"     // every query: lets a patch hold candidate-only evidence
)

// isMeta reports whether t is a meta token.
func isMeta(t string) bool { return len(t) > 1 && t[0] == '#' }

// lengthBuckets are upper bounds (in analyzer tokens) of the length tokens
// #len0, #len1, …: short comments ("thanks", "ok") tend to be poor
// answers, and a bag of words cannot see length otherwise.
var lengthBuckets = []int{3, 8, 20, 50}

var lengthTokens = []string{"#len0", "#len1", "#len2", "#len3", "#len4"}

// QueryTokens are the tokens of a query text, plus, when meta is true, the
// token "#q" that every query holds. Through it the topic model can put a
// "any query" word into patches beside candidate words such as #asker, so a
// patch can make decisions that depend on the candidate alone (a comment by
// the asker is rarely a good answer) while overlap gating still applies.
func QueryTokens(text string, meta bool) []string {
	return withQueryMeta(analyzers.Tokens(text), meta)
}

// withQueryMeta returns a query's analyzer tokens with "#q" added when
// meta is true, in a new slice: toks may be shared.
func withQueryMeta(toks []string, meta bool) []string {
	if meta {
		toks = append(toks[:len(toks):len(toks)], tokQuery)
	}
	return toks
}

// CandidateTokens are the tokens of a candidate: its analyzed text plus, when
// meta is true, meta tokens from its length and metadata (the
// "by_question_author" flag SemEval comments carry). Candidates recur across
// queries, so the analysis goes through the analyzers' shared token cache.
func CandidateTokens(text string, metadata map[string]any, meta bool) []string {
	cached := analyzers.CachedTokens(text)
	if !meta {
		return cached
	}
	toks := make([]string, len(cached), len(cached)+2) // the cached slice is shared
	copy(toks, cached)
	n := len(toks)
	b := len(lengthBuckets)
	for i, ub := range lengthBuckets {
		if n <= ub {
			b = i
			break
		}
	}
	toks = append(toks, lengthTokens[b])
	if v, ok := metadata["by_question_author"].(bool); ok && v {
		toks = append(toks, tokAsker)
	}
	return toks
}
