package index

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/semrank/semrank/analyzers"
)

// Stats reads the collection statistics that lexical stages need from any
// Bleve index, whatever its mapping: the document count, and how many
// documents hold a term in the fields the stages read. Terms are analyzed
// as the index analyzed those fields (Tokens), so a stage's terms are the
// index's own. It is safe for concurrent use.
//
// A term's document frequency is the largest of its counts in the fields
// and in Bleve's composite field _all (which, in a default mapping,
// holds every field): the count of documents holding it in any of them
// when one field holds all of those, as _all does, and a lower bound
// otherwise. Counts are cached until the document count changes; a write
// that leaves the count as it was (a replaced document) may leave a
// cached count stale by that document, which moves a statistic, not a
// result's correctness.
//
// Stages may also analyze the fields with another analyzer than the
// index's (NewStatsWith): the index's term dictionary then holds none of
// their terms, and the counts come from the term counts attached to the
// index with that analyzer (Attached.CountTerms).
type Stats struct {
	idx      bleve.Index
	fields   []string
	analyzer string
	tokens   *analyzers.Cache
	own      bool        // analyzer is the one the mapping gives fields[0]
	counted  *termCounts // the counts of another analyzer, nil until attached
	dfFields []string    // the fields whose largest document frequency DocFreq reads

	mu    sync.Mutex
	count uint64 // the document count the cache belongs to
	df    map[string]uint64
}

// NewStats returns the statistics of idx over fields (at least one),
// analyzed with the analyzer the mapping gives fields[0]. A field that
// no document of idx holds is an error naming the fields it has: a
// misspelt name would otherwise read as empty text.
func NewStats(idx bleve.Index, fields []string) (*Stats, error) {
	return NewStatsWith(idx, fields, "")
}

// NewStatsWith is NewStats with the fields analyzed by the analyzer named
// analyzer, one Bleve's registry knows ("" for the mapping's). Unless it
// is the mapping's own, DocCount and DocFreq report an error until the
// counts of that analyzer's terms are attached (Attached.CountTerms).
func NewStatsWith(idx bleve.Index, fields []string, analyzer string) (*Stats, error) {
	if len(fields) == 0 {
		return nil, fmt.Errorf("index: statistics over no fields")
	}
	if err := CheckFields(idx, fields...); err != nil {
		return nil, err
	}
	own, analyze, err := FieldAnalyzer(idx.Mapping(), fields[0])
	if err != nil {
		return nil, err
	}
	name := own
	if analyzer != "" && analyzer != own {
		name = analyzer
		if analyze = analyzerFunc(idx.Mapping(), name); analyze == nil {
			return nil, fmt.Errorf("index: no analyzer named %q", analyzer)
		}
	}
	dfFields := []string{FieldAll}
	if !allHolds(idx.Mapping(), fields) {
		dfFields = append(dfFields, fields...)
	}
	return &Stats{idx: idx, fields: slices.Clone(fields), analyzer: name, own: name == own, tokens: analyzers.NewCache(analyze), dfFields: dfFields}, nil
}

// allHolds reports whether m puts every one of fields into the composite
// field FieldAll of every document, as each field's analyzer made its
// terms: a term is then in FieldAll wherever it is in one of fields, and
// no field holds it in more documents than FieldAll does. It says so only
// where m says it plainly: one document mapping (no type mappings),
// FieldAll not disabled, and each field either mapped with
// include_in_all or, without a mapping of its own, indexed dynamically
// (Bleve's dynamic fields are included).
func allHolds(m mapping.IndexMapping, fields []string) bool {
	im, ok := m.(*mapping.IndexMappingImpl)
	if !ok || len(im.TypeMapping) > 0 || im.DefaultMapping == nil {
		return false
	}
	dm := im.DefaultMapping
	if all, ok := dm.Properties[FieldAll]; ok && !all.Enabled {
		return false
	}
	for _, f := range fields {
		if strings.Contains(f, ".") {
			return false
		}
		prop, mapped := dm.Properties[f]
		if !mapped {
			if !dm.Dynamic || !im.IndexDynamic {
				return false
			}
			continue
		}
		if !prop.Enabled || len(prop.Fields) == 0 {
			return false
		}
		for _, fm := range prop.Fields {
			if !fm.IncludeInAll || !fm.Index {
				return false
			}
		}
	}
	return true
}

// FieldAnalyzer returns the name of the analyzer m gives field (its
// default analyzer when the field names none) and a function returning
// a text's terms as that analyzer makes them.
func FieldAnalyzer(m mapping.IndexMapping, field string) (string, func(string) []string, error) {
	name := m.AnalyzerNameForPath(field)
	if im, ok := m.(*mapping.IndexMappingImpl); ok && name == "" {
		name = im.DefaultAnalyzer
	}
	analyze := analyzerFunc(m, name)
	if analyze == nil {
		return "", nil, fmt.Errorf("index: field %s: its analyzer %q cannot be built here", field, name)
	}
	return name, analyze, nil
}

// analyzerFunc returns a function returning a text's terms as the
// analyzer m names name makes them, or nil when m cannot build it.
func analyzerFunc(m mapping.IndexMapping, name string) func(string) []string {
	im, ok := m.(*mapping.IndexMappingImpl)
	if !ok {
		return nil
	}
	an := im.AnalyzerNamed(name)
	if an == nil {
		return nil
	}
	an = analyzers.Faster(an)
	return func(text string) []string {
		ts := an.Analyze([]byte(text))
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = string(t.Term)
		}
		return out
	}
}

// CheckFields returns an error naming the fields of names that no
// document of idx holds, and the fields it has.
func CheckFields(idx bleve.Index, names ...string) error {
	have, err := idx.Fields()
	if err != nil {
		return fmt.Errorf("index: listing fields: %w", err)
	}
	var missing []string
	for _, f := range names {
		if !slices.Contains(have, f) {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	have = slices.DeleteFunc(slices.Clone(have), func(f string) bool { return strings.HasPrefix(f, "_") })
	sort.Strings(have)
	word := "field"
	if len(missing) > 1 {
		word = "fields"
	}
	return fmt.Errorf("index: no document holds %s %s (the index has: %s)", word, strings.Join(missing, ", "), strings.Join(have, ", "))
}

// Analyzer returns the name of the analyzer Tokens applies.
func (s *Stats) Analyzer() string { return s.analyzer }

// Tokens returns text's terms as the index analyzes the fields. The
// returned slice is shared: callers must not modify it.
func (s *Stats) Tokens(text string) []string { return s.tokens.Tokens(text) }

// Own reports whether s analyzes as the index analyzed its fields, so
// that the index's term dictionary counts s's terms.
func (s *Stats) Own() bool { return s.own }

// ErrNotCounted is the error of statistics of another analyzer than the
// index's (NewStatsWith) before term counts made with it are attached.
var ErrNotCounted = errors.New("no term counts made with that analyzer are attached to the index")

// errNotCounted returns ErrNotCounted, naming s's fields and analyzer.
func (s *Stats) errNotCounted() error {
	return fmt.Errorf("index: the statistics of fields %s analyzed with %s: the index analyzed them with another analyzer, and %w", strings.Join(s.fields, ", "), s.analyzer, ErrNotCounted)
}

// DocCount returns the number of documents in the index, or, for another
// analyzer than the index's, the number holding attached term counts.
func (s *Stats) DocCount() (uint64, error) {
	if !s.own {
		if s.counted == nil {
			return 0, s.errNotCounted()
		}
		return s.counted.n, nil
	}
	n, err := s.idx.DocCount()
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	if n != s.count || s.df == nil || len(s.df) >= dfCacheMax {
		s.count, s.df = n, map[string]uint64{}
	}
	s.mu.Unlock()
	return n, nil
}

// DocFreq returns the number of documents holding the analyzed term (see
// Stats).
func (s *Stats) DocFreq(term string) (uint64, error) {
	if !s.own {
		if s.counted == nil {
			return 0, s.errNotCounted()
		}
		return s.counted.df[term], nil
	}
	s.mu.Lock()
	df, ok := s.df[term]
	s.mu.Unlock()
	if ok {
		return df, nil
	}
	df, err := maxDocFreq(s.idx, term, s.dfFields...)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	if s.df != nil && len(s.df) < dfCacheMax {
		s.df[term] = df
	}
	s.mu.Unlock()
	return df, nil
}

// CheckStored returns an error when none of the first documents of idx
// stores any of fields, which stages read as text: the fields are indexed
// (CheckFields finds them) but their text cannot be read back, and every
// candidate would be an empty document. The error says which mapping
// change is needed.
func CheckStored(idx bleve.Index, fields ...string) error {
	req := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 20, 0, false)
	req.Fields = fields
	res, err := idx.Search(req)
	if err != nil {
		return fmt.Errorf("index: reading stored fields: %w", err)
	}
	if len(res.Hits) == 0 {
		return nil
	}
	for _, h := range res.Hits {
		if len(h.Fields) > 0 {
			return nil
		}
	}
	return fmt.Errorf("index: fields %s are indexed but not stored, so their text cannot be read back: store them (Store: true in their field mappings; StoreDynamic for dynamic fields) and index the documents again", strings.Join(fields, ", "))
}
