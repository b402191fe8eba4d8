package server

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/registry"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/highlight"
	"github.com/blevesearch/bleve/v2/search/highlight/highlighter/html"
	index "github.com/blevesearch/bleve_index_api"
)

// highlighterName names, in Bleve's registry, the highlighter searches with
// SearchRequest.Highlight use: boundedHighlighter over Bleve's HTML one.
const highlighterName = "semrank_html_bounded"

// maxHighlightLocations is the number of a field's matches, the first
// ones, that its fragments are chosen from. Bleve's highlighter scores
// each match's fragment against every match, quadratic in a field's
// matches, and does not look at the request's context: over a field
// holding its query's words 200,000 times (1.3 MB) one search ran for
// minutes past its timeout. 256 matches cost well under a millisecond and
// leave a fragment of 200 characters more matches than it can hold.
const maxHighlightLocations = 256

// registerHighlighter registers the highlighter once per process; New
// returns its error.
var registerHighlighter = sync.OnceValue(func() error {
	return registry.RegisterHighlighter(highlighterName, func(config map[string]any, cache *registry.Cache) (highlight.Highlighter, error) {
		h, err := html.Constructor(config, cache)
		if err != nil {
			return nil, err
		}
		return boundedHighlighter{h}, nil
	})
})

// boundedHighlighter is a Bleve highlighter that gives the one it wraps
// only the first maxHighlightLocations matches of a field, so that its
// work is bounded whatever the field's length: a long field's fragments
// come from near its start.
type boundedHighlighter struct {
	highlight.Highlighter
}

// BestFragmentsInField implements highlight.Highlighter. dm's locations
// are swapped for the bounded ones while the wrapped highlighter runs, and
// put back after: Bleve calls it for one hit at a time.
func (h boundedHighlighter) BestFragmentsInField(dm *search.DocumentMatch, doc index.Document, field string, num int) []string {
	tlm := dm.Locations[field]
	kept := firstLocations(tlm, maxHighlightLocations)
	if len(kept) == 0 || countLocations(kept) == countLocations(tlm) {
		return h.Highlighter.BestFragmentsInField(dm, doc, field, num)
	}
	all := dm.Locations
	dm.Locations = maps.Clone(all)
	dm.Locations[field] = kept
	defer func() { dm.Locations = all }()
	return h.Highlighter.BestFragmentsInField(dm, doc, field, num)
}

// firstLocations returns tlm's first n locations by position, as a new
// map, or tlm itself when it holds no more than n.
func firstLocations(tlm search.TermLocationMap, n int) search.TermLocationMap {
	if countLocations(tlm) <= n {
		return tlm
	}
	type termLocation struct {
		term string
		loc  *search.Location
	}
	var all []termLocation
	for term, locs := range tlm {
		for _, l := range locs {
			all = append(all, termLocation{term, l})
		}
	}
	slices.SortFunc(all, func(a, b termLocation) int {
		return cmp.Or(cmp.Compare(a.loc.Start, b.loc.Start), cmp.Compare(a.loc.End, b.loc.End), cmp.Compare(a.term, b.term))
	})
	out := make(search.TermLocationMap)
	for _, tl := range all[:n] {
		out[tl.term] = append(out[tl.term], tl.loc)
	}
	return out
}

func countLocations(tlm search.TermLocationMap) int {
	n := 0
	for _, locs := range tlm {
		n += len(locs)
	}
	return n
}
