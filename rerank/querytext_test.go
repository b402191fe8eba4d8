package rerank

import (
	"testing"

	"github.com/blevesearch/bleve/v2/search/query"
)

func TestQueryText(t *testing.T) {
	match := func(s string) query.Query { return query.NewMatchQuery(s) }
	tests := []struct {
		name string
		q    query.Query
		want string
	}{
		{"nil", nil, ""},
		{"match", match("bank loan"), "bank loan"},
		{"phrase", query.NewMatchPhraseQuery("exit permit"), "exit permit"},
		{"term", query.NewTermQuery("visa"), "visa"},
		{"prefix", query.NewPrefixQuery("spons"), "spons"},
		{"query string fields and boosts", query.NewQueryStringQuery(`title:compiler +optimization^2 "code generation"`), "optimization compiler code generation"}, // must, then should
		{"query string drops negated words", query.NewQueryStringQuery(`parsing -lexical +title:grammar`), "grammar parsing"},
		{"query string drops negated phrases", query.NewQueryStringQuery(`compiler -"time sharing"`), "compiler"},
		{"query string keeps phrases whole", query.NewQueryStringQuery(`"a -b c"`), "a -b c"},
		{"query string escapes", query.NewQueryStringQuery(`title\:foo bar`), "title:foo bar"},
		{"query string without words", query.NewQueryStringQuery(`/comp.*/ -sharing`), ""},
		{"query string that does not parse", query.NewQueryStringQuery(`title:"red`), ""},
		{"disjunction", query.NewDisjunctionQuery([]query.Query{match("a b"), query.NewTermQuery("c")}), "a b c"},
		{"conjunction", query.NewConjunctionQuery([]query.Query{match("x"), match("y")}), "x y"},
		{"boolean keeps must and should, not must-not", query.NewBooleanQuery([]query.Query{match("must")}, []query.Query{match("should")}, []query.Query{match("not")}), "must should"},
		{"no text", query.NewDocIDQuery([]string{"d1"}), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := QueryText(tc.q); got != tc.want {
				t.Errorf("QueryText = %q, want %q", got, tc.want)
			}
		})
	}
}
