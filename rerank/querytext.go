package rerank

import (
	"strings"

	"github.com/blevesearch/bleve/v2/search/query"
)

// QueryText returns the words a Bleve query searches for, which is what
// semantic stages compare candidates with: the text of match, phrase and
// query-string queries (without the query-string syntax: field prefixes,
// +/-, boosts and quotes; negated words are dropped), the terms of term,
// prefix and fuzzy queries, and the words of the queries a disjunction,
// conjunction or boolean query must or should match. Queries that carry
// no text (numeric ranges, doc-id sets) contribute nothing. Wrap reranks
// with this text; use it to rerank a Bleve query's hits with
// Pipeline.Rerank directly.
func QueryText(q query.Query) string {
	var parts []string
	var walk func(q query.Query)
	walk = func(q query.Query) {
		switch t := q.(type) {
		case *query.MatchQuery:
			parts = append(parts, t.Match)
		case *query.MatchPhraseQuery:
			parts = append(parts, t.MatchPhrase)
		case *query.QueryStringQuery:
			parts = append(parts, queryStringText(t.Query))
		case *query.TermQuery:
			parts = append(parts, t.Term)
		case *query.PhraseQuery:
			parts = append(parts, strings.Join(t.Terms, " "))
		case *query.PrefixQuery:
			parts = append(parts, t.Prefix)
		case *query.FuzzyQuery:
			parts = append(parts, t.Term)
		case *query.DisjunctionQuery:
			for _, c := range t.Disjuncts {
				walk(c)
			}
		case *query.ConjunctionQuery:
			for _, c := range t.Conjuncts {
				walk(c)
			}
		case *query.BooleanQuery:
			for _, c := range []query.Query{t.Must, t.Should} {
				if c != nil {
					walk(c)
				}
			}
		}
	}
	if q != nil {
		walk(q)
	}
	return strings.Join(parts, " ")
}

// queryStringText strips query-string syntax (field prefixes, +/-, boosts,
// quotes) and keeps the words; negated words are dropped.
func queryStringText(s string) string {
	var out []string
	for _, tok := range strings.Fields(s) {
		if strings.HasPrefix(tok, "-") {
			continue
		}
		tok = strings.TrimLeft(tok, "+")
		if i := strings.IndexByte(tok, ':'); i >= 0 && !strings.HasPrefix(tok, `"`) {
			tok = tok[i+1:]
		}
		if i := strings.IndexByte(tok, '^'); i >= 0 {
			tok = tok[:i]
		}
		tok = strings.Trim(tok, `"()~*`)
		if tok != "" {
			out = append(out, tok)
		}
	}
	return strings.Join(out, " ")
}
