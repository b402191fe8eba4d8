package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/semrank/semrank/index"
)

// Stats are the collection statistics Bleve's scorers read, for the terms
// of one query: a shard's own (Presearch), or a whole collection's, which
// a coordinator sums from its shards' and sends with the query, so that
// each shard scores its documents as one index of every document would.
type Stats struct {
	Docs   uint64                 `json:"docs"`
	Fields map[string]*FieldStats `json:"fields,omitempty"`
}

// FieldStats are one field's statistics.
type FieldStats struct {
	// Terms is the size of the field's dictionary: Bleve's BM25 reads the
	// average field length as Terms / Docs, rounded up. A collection's is
	// the size of the union of its shards' dictionaries, what one index
	// merged into a single segment reads (scorch sums the dictionaries of
	// its segments, so on an index of several, terms held by more than
	// one count more than once).
	Terms int `json:"terms"`
	// DocFreq holds, for each term of the query, the number of documents
	// whose field holds it.
	DocFreq map[string]uint64 `json:"doc_freq,omitempty"`
}

// docFreq returns the count of term in field, if s has it.
func (s *Stats) docFreq(field string, term []byte) (uint64, bool) {
	if f := s.Fields[field]; f != nil {
		n, ok := f.DocFreq[string(term)]
		return n, ok
	}
	return 0, false
}

// add adds o, a shard's statistics, to s: documents and document
// frequencies sum (each document lives on one shard); dictionary sizes do
// not (see FieldStats.Terms) and are left to the caller.
func (s *Stats) add(o *Stats) {
	s.Docs += o.Docs
	for name, f := range o.Fields {
		g := s.Fields[name]
		if g == nil {
			g = &FieldStats{DocFreq: map[string]uint64{}}
			if s.Fields == nil {
				s.Fields = map[string]*FieldStats{}
			}
			s.Fields[name] = g
		}
		for t, n := range f.DocFreq {
			g.DocFreq[t] += n
		}
	}
}

// statsReader is a shard's index reader whose statistics are the
// collection's: it reads the shard's postings, but gives Bleve's term
// searchers the document count, term document counts and dictionary
// sizes of stats, which are all a term scorer reads (idf and BM25's
// average length). Terms stats does not hold keep the shard's own counts.
// Without stats it records the terms the searchers open, and their
// counts: a shard's presearch.
type statsReader struct {
	bindex.IndexReader
	stats *Stats

	mu   sync.Mutex
	seen *Stats // when recording
}

// TermFieldReader implements bindex.IndexReader.
func (r *statsReader) TermFieldReader(ctx context.Context, term []byte, field string, freq, norm, vectors bool) (bindex.TermFieldReader, error) {
	tfr, err := r.IndexReader.TermFieldReader(ctx, term, field, freq, norm, vectors)
	if err != nil || tfr == nil {
		return tfr, err
	}
	if r.seen != nil {
		// A query may search a term twice ("us and us"): counted once.
		r.mu.Lock()
		f := r.seen.Fields[field]
		if f == nil {
			f = &FieldStats{DocFreq: map[string]uint64{}}
			r.seen.Fields[field] = f
		}
		f.DocFreq[string(term)] = tfr.Count()
		r.mu.Unlock()
		return tfr, nil
	}
	if n, ok := r.stats.docFreq(field, term); ok {
		return countedTFR{tfr, n}, nil
	}
	return tfr, nil
}

// DocCount implements bindex.IndexReader.
func (r *statsReader) DocCount() (uint64, error) {
	if r.stats != nil {
		return r.stats.Docs, nil
	}
	return r.IndexReader.DocCount()
}

// FieldCardinality implements bindex.BM25Reader.
func (r *statsReader) FieldCardinality(field string) (int, error) {
	if r.stats != nil {
		if f := r.stats.Fields[field]; f != nil {
			return f.Terms, nil
		}
	}
	return fieldTerms(r.IndexReader, field)
}

// fieldTerms returns the size of field's dictionary in r, as Bleve's BM25
// reads it; 0 for a reader that does not say.
func fieldTerms(r bindex.IndexReader, field string) (int, error) {
	if b, ok := r.(bindex.BM25Reader); ok {
		return b.FieldCardinality(field)
	}
	return 0, nil
}

// The dictionary searches a scorch reader offers, passed on so that
// regexp, fuzzy and range queries are searched as they are without
// statsReader.

var errNoDict = errors.New("cluster: the shard's index reader offers no such dictionary search")

// FieldDictRegexp implements bindex.IndexReaderRegexp.
func (r *statsReader) FieldDictRegexp(field, regex string) (bindex.FieldDict, error) {
	if x, ok := r.IndexReader.(bindex.IndexReaderRegexp); ok {
		return x.FieldDictRegexp(field, regex)
	}
	return nil, errNoDict
}

// FieldDictRegexpAutomaton implements bindex.IndexReaderRegexp.
func (r *statsReader) FieldDictRegexpAutomaton(field, regex string) (bindex.FieldDict, bindex.RegexAutomaton, error) {
	if x, ok := r.IndexReader.(bindex.IndexReaderRegexp); ok {
		return x.FieldDictRegexpAutomaton(field, regex)
	}
	return nil, nil, errNoDict
}

// FieldDictFuzzy implements bindex.IndexReaderFuzzy.
func (r *statsReader) FieldDictFuzzy(field, term string, fuzziness int, prefix string) (bindex.FieldDict, error) {
	if x, ok := r.IndexReader.(bindex.IndexReaderFuzzy); ok {
		return x.FieldDictFuzzy(field, term, fuzziness, prefix)
	}
	return nil, errNoDict
}

// FieldDictFuzzyAutomaton implements bindex.IndexReaderFuzzy.
func (r *statsReader) FieldDictFuzzyAutomaton(field, term string, fuzziness int, prefix string) (bindex.FieldDict, bindex.FuzzyAutomaton, error) {
	if x, ok := r.IndexReader.(bindex.IndexReaderFuzzy); ok {
		return x.FieldDictFuzzyAutomaton(field, term, fuzziness, prefix)
	}
	return nil, nil, errNoDict
}

// FieldDictContains implements bindex.IndexReaderContains.
func (r *statsReader) FieldDictContains(field string) (bindex.FieldDictContains, error) {
	if x, ok := r.IndexReader.(bindex.IndexReaderContains); ok {
		return x.FieldDictContains(field)
	}
	return nil, errNoDict
}

// countedTFR is a term's postings on a shard, counted as in the whole
// collection.
type countedTFR struct {
	bindex.TermFieldReader
	count uint64
}

func (t countedTFR) Count() uint64 { return t.count }

// statsQuery is a query searched with a collection's statistics: its
// searchers read the shard through a statsReader.
type statsQuery struct {
	query.Query
	stats *Stats
}

// SplitsAs implements index.SplitsAs: the statsReader a search reads
// through only reads the collection's statistics it was given, so two
// searchers may read it at once, and it passes document numbers through.
func (q statsQuery) SplitsAs() query.Query { return q.Query }

// View implements index.ReadsThrough: r read with the collection's
// statistics.
func (q statsQuery) View(r bindex.IndexReader) bindex.IndexReader {
	return &statsReader{IndexReader: r, stats: q.stats}
}

// Searcher implements query.Query.
func (q statsQuery) Searcher(ctx context.Context, r bindex.IndexReader, m mapping.IndexMapping, o search.SearcherOptions) (search.Searcher, error) {
	return q.Query.Searcher(ctx, q.View(r), m, o)
}

// WithStats returns req searching its query with stats, a whole
// collection's statistics, in place of the index's own (see Stats); req
// itself when stats is nil. Queries
// that expand to the terms of a dictionary (prefix, wildcard, regexp,
// fuzzy) expand to the shard's own terms, and Bleve normalises a query's
// scores over the terms it searches, so those queries score as one index
// would only where every shard expands them alike.
func WithStats(req *bleve.SearchRequest, stats *Stats) *bleve.SearchRequest {
	if stats == nil {
		return req
	}
	out := *req
	out.Query = statsQuery{Query: req.Query, stats: stats}
	return &out
}

// Presearch returns idx's statistics for the terms q searches: its
// document count, and for each field q reads, its dictionary size and the
// number of documents holding each of q's terms there.
func Presearch(ctx context.Context, idx bleve.Index, q query.Query) (*Stats, error) {
	r, err := index.Reader(idx)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rec := &statsReader{IndexReader: r, seen: &Stats{Fields: map[string]*FieldStats{}}}
	s, err := q.Searcher(ctx, rec, idx.Mapping(), search.SearcherOptions{})
	if err != nil {
		return nil, err
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	out := rec.seen
	if out.Docs, err = r.DocCount(); err != nil {
		return nil, err
	}
	for name, f := range out.Fields {
		if f.Terms, err = fieldTerms(r, name); err != nil {
			return nil, fmt.Errorf("cluster: field %s: %w", name, err)
		}
	}
	return out, nil
}

// FieldDocFreqs returns, for each of fields, the number of documents of
// idx holding each of terms in it (terms no document holds left out).
func FieldDocFreqs(ctx context.Context, idx bleve.Index, fields, terms []string) (map[string]map[string]uint64, error) {
	r, err := index.Reader(idx)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := make(map[string]map[string]uint64, len(fields))
	for _, f := range fields {
		df := map[string]uint64{}
		for _, t := range terms {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			tfr, err := r.TermFieldReader(ctx, []byte(t), f, false, false, false)
			if err != nil {
				return nil, err
			}
			if n := tfr.Count(); n > 0 {
				df[t] = n
			}
			if err := tfr.Close(); err != nil {
				return nil, err
			}
		}
		out[f] = df
	}
	return out, nil
}

// Terms calls fn with each term of field's dictionary in idx, in order,
// until fn returns an error.
func Terms(idx bleve.Index, field string, fn func(term string) error) error {
	d, err := idx.FieldDict(field)
	if err != nil {
		return err
	}
	defer d.Close()
	for {
		e, err := d.Next()
		if err != nil || e == nil {
			return err
		}
		if err := fn(e.Term); err != nil {
			return err
		}
	}
}
