package server

import (
	"math"
	"reflect"
	"strings"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
)

// MaxBoost bounds the magnitude of every boost in a query object, its query
// strings' included. A boost scales the first stage's scores; near
// float64's range (1e308) it makes them infinite or NaN, which the fusion
// refuses (a 500) and JSON cannot carry (an empty answer). A million
// already makes one clause outweigh any other, so nothing a boost can
// usefully say is lost.
const MaxBoost = 1e6

// checkQuery refuses, as the client's errors, what Bleve would run without
// complaint but answer wrongly: a boost past MaxBoost either way (or NaN),
// and a query string that does not parse or has no searchable terms. Bleve
// parses a query string only when it runs it, and reads one whose every
// clause analyzes to nothing (punctuation, stop words: "title:((((", its
// syntax having no parentheses) as matching nothing, a 200 with no hits
// that looks like an empty index. m analyzes the query strings' words as
// Bleve will.
func checkQuery(q query.Query, m mapping.IndexMapping) error {
	return walkQuery(q, func(q query.Query) error {
		if b, ok := q.(query.BoostableQuery); ok {
			if v := b.Boost(); math.IsNaN(v) || math.Abs(v) > MaxBoost {
				return badRequest("query: boost %g is out of range: -%g to %g", v, MaxBoost, MaxBoost)
			}
		}
		qs, ok := q.(*query.QueryStringQuery)
		if !ok {
			return nil
		}
		parsed, err := qs.Parse()
		if err != nil {
			return badRequest("query: query string %s does not parse: %v", quote(qs.Query), err)
		}
		if err := checkQuery(parsed, m); err != nil {
			return err
		}
		var empty []string
		if !searchable(parsed, m, &empty) {
			for i, e := range empty {
				empty[i] = quote(e)
			}
			why := "it is empty"
			if len(empty) > 0 {
				why = strings.Join(empty, ", ") + " analyze to nothing (punctuation or stop words; Bleve's query-string syntax has no parentheses to group with, so they are searched as text)"
			}
			return badRequest("query: query string %s has no searchable terms: %s", quote(qs.Query), why)
		}
		return nil
	})
}

// walkQuery calls f on q and on every query nested in it (a boolean
// query's clauses, a conjunction's conjuncts, a disjunction's disjuncts),
// found as the exported fields of type query.Query or []query.Query, so
// that a query type Bleve adds later is walked too. It stops at f's first
// error.
func walkQuery(q query.Query, f func(query.Query) error) error {
	if q == nil {
		return nil
	}
	if err := f(q); err != nil {
		return err
	}
	v := reflect.ValueOf(q)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	queryType := reflect.TypeFor[query.Query]()
	for i := range v.NumField() {
		fv := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch {
		case fv.Type() == queryType:
			if !fv.IsNil() {
				if err := walkQuery(fv.Interface().(query.Query), f); err != nil {
					return err
				}
			}
		case fv.Kind() == reflect.Slice && fv.Type().Elem() == queryType:
			for j := range fv.Len() {
				if c := fv.Index(j); !c.IsNil() {
					if err := walkQuery(c.Interface().(query.Query), f); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// searchable reports whether some clause of q, a parsed query string, can
// match: a match or phrase clause whose text analyzes to at least one
// term under its field's analyzer, or a clause of another kind (a
// wildcard, a range) other than match_none. The texts of the clauses
// that analyze to nothing are appended to empty. Bleve drops those
// clauses from a query string's conjunctions and disjunctions, so a query
// string is empty exactly when none is left.
func searchable(q query.Query, m mapping.IndexMapping, empty *[]string) bool {
	found := false
	_ = walkQuery(q, func(q query.Query) error {
		var text, field, analyzer string
		switch q := q.(type) {
		case *query.BooleanQuery, *query.ConjunctionQuery, *query.DisjunctionQuery:
			return nil // their clauses are walked
		case *query.MatchNoneQuery:
			return nil
		case *query.MatchQuery:
			text, field, analyzer = q.Match, q.FieldVal, q.Analyzer
		case *query.MatchPhraseQuery:
			text, field, analyzer = q.MatchPhrase, q.FieldVal, q.Analyzer
		default:
			found = true
			return nil
		}
		if analyzes(text, field, analyzer, m) {
			found = true
		} else {
			*empty = append(*empty, text)
		}
		return nil
	})
	return found
}

// analyzes reports whether text yields a term under the analyzer Bleve's
// match query uses for it: analyzer if set, else the field's (the default
// search field's when field is empty). An analyzer the mapping does not
// know is left for Bleve to refuse when it runs the query.
func analyzes(text, field, analyzer string, m mapping.IndexMapping) bool {
	if field == "" {
		field = m.DefaultSearchField()
	}
	if analyzer == "" {
		analyzer = m.AnalyzerNameForPath(field)
	}
	a := m.AnalyzerNamed(analyzer)
	if a == nil {
		return true
	}
	return len(a.Analyze([]byte(text))) > 0
}
