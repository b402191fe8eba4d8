package index

import (
	"slices"
	"testing"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
)

// BenchmarkTermCountsOf reads a question's terms' counts off the stored
// term counts of 100 real forum comments (testdata/tweak), as the lexical
// stages do for a window.
func BenchmarkTermCountsOf(b *testing.B) {
	ds, err := dataset.Load("../testdata/tweak")
	if err != nil {
		b.Fatal(err)
	}
	docs := ds.Corpus[:min(100, len(ds.Corpus))]
	enc := make([][]byte, len(docs))
	for i, d := range docs {
		enc[i] = EncodeTermCounts(analyzers.Tokens(d.FullText()))
	}
	terms := slices.Compact(slices.Sorted(slices.Values(analyzers.Tokens("Where can I find a good bank in Doha to open an account for my salary and a visa?"))))
	out := make([]int, len(terms))
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range enc {
			if _, err := TermCountsOf(e, terms, out); err != nil {
				b.Fatal(err)
			}
		}
	}
}
