package convert

import (
	"slices"
	"strings"
	"testing"
)

// TestSemEvalTextKeepsSkippedThreads: subtask A skips threads whose
// related question repeats another, but their comments are found nowhere
// else, and SemEvalText promises every text.
func TestSemEvalTextKeepsSkippedThreads(t *testing.T) {
	texts, err := SemEvalText("../../testdata/semeval/dev-slice.xml")
	if err != nil {
		t.Fatal(err)
	}
	// Q268_R4 and Q268_R27 are skipped in subtask A; comments of theirs:
	for _, c := range []string{"Commercial bank/IBQ", "Haha.. so you want to get away without paying the loan ?"} {
		if !slices.Contains(texts, c) {
			t.Errorf("comment %q of a thread subtask A skips is missing", c)
		}
	}
	for _, s := range []string{"Good Bank", "Best Bank"} { // original and related question
		if !slices.ContainsFunc(texts, func(t string) bool { return strings.HasPrefix(t, s) }) {
			t.Errorf("text starting %q missing", s)
		}
	}
	if len(texts) != len(slices.Compact(slices.Sorted(slices.Values(texts)))) {
		t.Error("texts repeat")
	}
}
