package tweak

import (
	"fmt"
	"sort"

	"github.com/semrank/semrank/analyzers"
)

// DocFreqs is a source of document frequencies over analyzed terms.
// *index.Index implements it (df over title and text), as does DFTable, an
// in-memory count over a corpus for training without an index.
type DocFreqs interface {
	DocCount() (uint64, error)
	DocFreq(term string) (uint64, error)
}

// DFTable is a frozen table of document frequencies: what a model stores so
// that the weights it computes for a document at index time and at rerank
// time are the same, whatever index it is later used with. It also serves
// as the query log's frequency table.
type DFTable struct {
	N     uint64            // documents counted
	Count map[string]uint64 // term → documents containing it
}

// CountDF counts, for every analyzed term, the texts containing it.
func CountDF(texts []string) *DFTable {
	t := &DFTable{Count: map[string]uint64{}}
	for _, s := range texts {
		t.add(s)
	}
	return t
}

func (t *DFTable) add(text string) {
	t.N++
	seen := map[string]bool{}
	for _, tok := range analyzers.CachedTokens(text) {
		if !seen[tok] {
			seen[tok] = true
			t.Count[tok]++
		}
	}
}

// Snapshot freezes src's document frequencies for terms into a table.
// Terms with df 0 are left out.
func Snapshot(src DocFreqs, terms []string) (*DFTable, error) {
	n, err := src.DocCount()
	if err != nil {
		return nil, fmt.Errorf("tweak: document count: %w", err)
	}
	t := &DFTable{N: n, Count: make(map[string]uint64, len(terms))}
	for _, term := range terms {
		df, err := src.DocFreq(term)
		if err != nil {
			return nil, fmt.Errorf("tweak: df of %q: %w", term, err)
		}
		if df > 0 {
			t.Count[term] = df
		}
	}
	return t, nil
}

// DocCount implements DocFreqs.
func (t *DFTable) DocCount() (uint64, error) { return t.N, nil }

// DocFreq implements DocFreqs.
func (t *DFTable) DocFreq(term string) (uint64, error) { return t.Count[term], nil }

// Freq returns the count of term, 0 for a nil table or unknown term.
func (t *DFTable) Freq(term string) uint64 {
	if t == nil {
		return 0
	}
	return t.Count[term]
}

// Terms returns the table's terms, sorted.
func (t *DFTable) Terms() []string {
	out := make([]string, 0, len(t.Count))
	for k := range t.Count {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
