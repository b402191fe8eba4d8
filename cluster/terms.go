package cluster

import (
	"context"
	"errors"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// queryTerms returns the terms q's searchers read, by field, as a
// presearch on a shard would find them (Presearch): q's searcher built
// over an index that holds nothing, with the collection's mapping, whose
// analyzers turn q's text into its terms. ok is false when the terms
// depend on what the index holds: q expands terms from a dictionary
// (prefix, wildcard, regexp, fuzzy, ranges) or reads anything but term
// postings, so only the shards can say.
func queryTerms(q query.Query, m mapping.IndexMapping) (terms map[string][]string, ok bool) {
	r := &termsReader{terms: map[string][]string{}}
	s, err := q.Searcher(context.Background(), r, m, search.SearcherOptions{})
	if err != nil || r.other {
		return nil, false
	}
	if err := s.Close(); err != nil {
		return nil, false
	}
	return r.terms, true
}

// errDepends stops a searcher that reads what only an index knows.
var errDepends = errors.New("cluster: the query reads the index's dictionaries")

// termsReader is an index reader that holds nothing and records the
// terms its term readers are asked for; asked for anything else, it
// notes that the query's terms depend on the index.
type termsReader struct {
	terms map[string][]string
	other bool
}

func (r *termsReader) TermFieldReader(_ context.Context, term []byte, field string, _, _, _ bool) (index.TermFieldReader, error) {
	r.terms[field] = append(r.terms[field], string(term))
	return emptyTFR{}, nil
}

func (r *termsReader) depends() error { r.other = true; return errDepends }

func (r *termsReader) DocIDReaderAll() (index.DocIDReader, error)          { return nil, r.depends() }
func (r *termsReader) DocIDReaderOnly([]string) (index.DocIDReader, error) { return nil, r.depends() }
func (r *termsReader) FieldDict(string) (index.FieldDict, error)           { return nil, r.depends() }
func (r *termsReader) FieldDictRange(string, []byte, []byte) (index.FieldDict, error) {
	return nil, r.depends()
}
func (r *termsReader) FieldDictPrefix(string, []byte) (index.FieldDict, error) {
	return nil, r.depends()
}
func (r *termsReader) Document(string) (index.Document, error) { return nil, r.depends() }
func (r *termsReader) DocValueReader([]string) (index.DocValueReader, error) {
	return nil, r.depends()
}
func (r *termsReader) Fields() ([]string, error)                        { return nil, r.depends() }
func (r *termsReader) GetInternal([]byte) ([]byte, error)               { return nil, r.depends() }
func (r *termsReader) DocCount() (uint64, error)                        { return 0, nil }
func (r *termsReader) ExternalID(index.IndexInternalID) (string, error) { return "", r.depends() }
func (r *termsReader) InternalID(string) (index.IndexInternalID, error) { return nil, r.depends() }
func (r *termsReader) Close() error                                     { return nil }

// emptyTFR is the postings of a term no document holds.
type emptyTFR struct{}

func (emptyTFR) Next(*index.TermFieldDoc) (*index.TermFieldDoc, error) { return nil, nil }
func (emptyTFR) Advance(index.IndexInternalID, *index.TermFieldDoc) (*index.TermFieldDoc, error) {
	return nil, nil
}
func (emptyTFR) Count() uint64 { return 0 }
func (emptyTFR) Close() error  { return nil }
func (emptyTFR) Size() int     { return 0 }
