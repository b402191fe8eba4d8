package rerank

import (
	"errors"
	"fmt"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/index"
)

// firstStage builds the first-stage query of a search from text.
type firstStage func(text string) (query.Query, error)

// newFirstStage returns the first stage for searches of idx from text:
// over a semrank index (or none), index.TextQuery, its terms boosted by
// qw's weights when qw is set; over another index, a match query on the
// mapping's default search field, as a Bleve application sends. With
// fields, a disjunction of match queries on each, each analyzed with its
// field's analyzer.
func newFirstStage(idx bleve.Index, fields FieldList, qw QueryWeighter, semrankLike bool) (firstStage, error) {
	_, semrank := idx.(*index.Index)
	if idx == nil || semrankLike {
		semrank = true
	}
	if qw != nil && (!semrank || len(fields) > 0) {
		return nil, errors.New("first_stage.query_boost weighs semrank's analyzed terms over its title and text: it needs a semrank index and no first_stage.fields")
	}
	if len(fields) > 0 && idx != nil {
		if err := index.CheckFields(idx, fields...); err != nil {
			return nil, fmt.Errorf("first_stage.fields: %w", err)
		}
	}
	switch {
	case len(fields) > 0:
		return func(text string) (query.Query, error) {
			if err := hasTerms(idx, text, fields...); err != nil {
				return nil, err
			}
			qs := make([]query.Query, len(fields))
			for i, f := range fields {
				m := bleve.NewMatchQuery(text)
				m.SetField(f)
				qs[i] = m
			}
			if len(qs) == 1 {
				return qs[0], nil
			}
			return bleve.NewDisjunctionQuery(qs...), nil
		}, nil
	case semrank:
		return func(text string) (query.Query, error) { return semrankQuery(text, qw) }, nil
	}
	return func(text string) (query.Query, error) {
		if err := hasTerms(idx, text, idx.Mapping().DefaultSearchField()); err != nil {
			return nil, err
		}
		return bleve.NewMatchQuery(text), nil
	}, nil
}

// hasTerms returns index.ErrEmptyQuery when the analyzers of fields
// leave no term of text.
func hasTerms(idx bleve.Index, text string, fields ...string) error {
	m, ok := idx.Mapping().(*mapping.IndexMappingImpl)
	if !ok {
		if strings.TrimSpace(text) == "" {
			return index.ErrEmptyQuery
		}
		return nil
	}
	for _, f := range fields {
		name := m.AnalyzerNameForPath(f)
		if name == "" {
			name = m.DefaultAnalyzer
		}
		if ts, err := m.AnalyzeText(name, []byte(text)); err != nil || len(ts) > 0 {
			return nil
		}
	}
	return index.ErrEmptyQuery
}

// Query returns the first-stage query of a search from text: what
// semrank search, run, rerank and the server send when given text (see
// Config.FirstStage). A text without searchable terms gives
// index.ErrEmptyQuery.
func (p *Pipeline) Query(text string) (query.Query, error) {
	if p.first == nil {
		return index.TextQuery(text)
	}
	return p.first(text)
}

// semrankQuery returns the first-stage query for text over a semrank
// index: the plain BM25 text
// query, or, when qw is set, its learned query term weights as boosts.
func semrankQuery(text string, qw QueryWeighter) (query.Query, error) {
	if qw != nil {
		if w := qw.QueryWeights(text); len(w) > 0 {
			return index.WeightedQuery(w)
		}
	}
	return index.TextQuery(text)
}
