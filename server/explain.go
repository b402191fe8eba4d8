package server

import (
	"strings"

	"github.com/blevesearch/bleve/v2/search"
)

// cleanExplanation returns a copy of e whose messages no longer carry the
// hit's internal document number. Bleve's term scorer prints it raw with
// %s ("fieldWeight(_all:visa in \x00\x00\x00\x00\x00\x00\x00)), ...): eight
// bytes of a big-endian integer that mean nothing to a reader, are not
// valid UTF-8, and may themselves contain ')' or ',' — so only the exact
// bytes of the hit's internal id are removed, here, before JSON encoding
// turns them into replacement characters.
func cleanExplanation(e *search.Explanation, internalID []byte) *search.Explanation {
	if e == nil {
		return nil
	}
	out := &search.Explanation{Value: e.Value, Message: e.Message, PartialMatch: e.PartialMatch}
	if len(internalID) > 0 {
		out.Message = strings.ReplaceAll(out.Message, " in "+string(internalID), "")
	}
	if len(e.Children) > 0 {
		out.Children = make([]*search.Explanation, len(e.Children))
		for i, c := range e.Children {
			out.Children[i] = cleanExplanation(c, internalID)
		}
	}
	return out
}
