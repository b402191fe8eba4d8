package termorder

import (
	"strings"
	"testing"
)

// TestOrder checks After and Before against the strings package's order
// on pairs that differ in the first byte, later, by length, or not at all.
func TestOrder(t *testing.T) {
	words := []string{"", "a", "ab", "abc", "abd", "b", "ba", "z", "zz", "é", "\x00", "\xff"}
	for _, a := range words {
		for _, b := range words {
			c := strings.Compare(a, b)
			if got := After([]byte(a), []byte(b)); got != (c > 0) {
				t.Errorf("After(%q, %q) = %v", a, b, got)
			}
			if got := Before(a, []byte(b)); got != (c < 0) {
				t.Errorf("Before(%q, %q) = %v", a, b, got)
			}
		}
	}
}

// FuzzOrder: the inline comparisons agree with strings.Compare.
func FuzzOrder(f *testing.F) {
	f.Add("apple", "apricot")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		c := strings.Compare(a, b)
		if After([]byte(a), []byte(b)) != (c > 0) || Before(a, []byte(b)) != (c < 0) {
			t.Errorf("%q vs %q: After %v, Before %v, Compare %d", a, b, After([]byte(a), []byte(b)), Before(a, []byte(b)), c)
		}
	})
}
