package index

import (
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/analyzers"
)

// BenchmarkTermCountsOf reads a query's terms' counts off the stored term
// counts of a CACM-sized abstract, as the lexical stages do for every
// candidate of a window.
func BenchmarkTermCountsOf(b *testing.B) {
	text := strings.Repeat("The use of computer programs to solve systems of linear equations by iterative methods, with a discussion of convergence, round-off error and storage on magnetic tape. ", 3)
	enc := EncodeTermCounts(analyzers.Tokens(text))
	terms := slices.Compact(slices.Sorted(slices.Values(analyzers.Tokens("iterative solution of linear systems on a computer"))))
	out := make([]int, len(terms))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := TermCountsOf(enc, terms, out); err != nil {
			b.Fatal(err)
		}
	}
}
