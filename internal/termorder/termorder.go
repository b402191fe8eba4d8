// Package termorder compares analyzed terms as scans of sorted term lists
// do, term after term. Terms next to each other in a sorted list, and a
// query's terms against a document's, mostly differ in their first byte,
// which it compares inline: the runtime's comparison, called for every
// term otherwise, was a third of scoring a window from stored vectors.
package termorder

// After reports whether a sorts after b.
func After(a, b []byte) bool {
	if len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		return a[0] > b[0]
	}
	return string(a) > string(b)
}

// Before reports whether a sorts before b.
func Before(a string, b []byte) bool {
	if len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		return a[0] < b[0]
	}
	return a < string(b)
}
