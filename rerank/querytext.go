package rerank

import (
	"strings"

	"github.com/blevesearch/bleve/v2/search/query"
)

// QueryText returns the words a Bleve query searches for, which is what
// semantic stages compare candidates with: the text of match and phrase
// queries, the terms of term, prefix and fuzzy queries, and the words of
// the queries a disjunction, conjunction or boolean query must or should
// match (not those it must not, nor its filter). A term or match query on
// a metadata field (lang:ar, a category) in a conjunction, or in a
// boolean query's must or should, therefore adds its value to the text the
// stages compare candidates with; a restriction that is not what the user
// is looking for belongs in BooleanQuery.AddFilter, which Bleve applies
// and QueryText leaves out. A query string counts as the query Bleve
// parses it into, so its syntax (field names, +/-, boosts, quotes) and
// its negated words and phrases are left out. Queries that carry no words
// (numeric ranges, doc-id sets, wildcards, regular expressions)
// contribute nothing. Wrap reranks
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
			// Bleve's own parser reads the syntax (phrases, escapes,
			// negated phrases); a query it cannot parse fails to
			// search anyway.
			if parsed, err := t.Parse(); err == nil {
				walk(parsed)
			}
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
