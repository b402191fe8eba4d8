package main

import (
	"bytes"
	"testing"
	"time"
)

// TestProgressLines checks the progress written off a terminal: nothing
// for a step that ends within logEvery, a line once logEvery has passed,
// and a last line at the end of a step that wrote one.
func TestProgressLines(t *testing.T) {
	tests := []struct {
		name  string
		late  bool // logEvery has passed before the second Set
		steps []int
		want  string
	}{
		{"short step", false, []int{1, 2, 3}, ""},
		{"long step", true, []int{1, 2, 3}, "queries: 2/3\nqueries: 3/3\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := newLines(&buf, 3, "queries")
			for i, n := range tt.steps {
				if i == 1 && tt.late {
					p.last = time.Now().Add(-logEvery)
				}
				p.Set(n)
			}
			p.Finish()
			if got := buf.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
