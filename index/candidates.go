package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/internal/runs"
)

// Hit is one first-stage candidate: a document, its first-stage score
// and rank, and its place in a given list. Package rerank's stages take
// it as rerank.Candidate. The document's Metadata is decoded from
// FieldMeta (nil when it has none); on an index semrank did not build,
// where there is no FieldMeta, rerank puts the hit's stored fields there.
type Hit struct {
	dataset.Doc
	// Score is the first-stage score (on a semrank index BM25, rounded by
	// StableScore); 0 for a given candidate that matches no query term
	// (see Given).
	Score float64
	Rank  int // 1-based
	// GivenRank is the 1-based position in a given candidate list (Given),
	// 0 for retrieved hits. Such lists often come from a strong external
	// ranker (SemEval's are a search engine's), so the position is signal.
	GivenRank int
}

// ErrEmptyQuery is returned when a query has no searchable terms (empty, or
// only stop words).
var ErrEmptyQuery = errors.New("query has no searchable terms")

// TextQuery returns the first-stage query for text: a disjunction of its
// analyzed terms over title and text together, scored by BM25.
func TextQuery(text string) (query.Query, error) {
	if len(analyzers.Tokens(text)) == 0 {
		return nil, ErrEmptyQuery
	}
	q := bleve.NewMatchQuery(text)
	q.SetField(FieldAll)
	q.Analyzer = analyzers.Name
	return q, nil
}

// WeightedQuery returns a disjunction of analyzed terms, each boosted by
// its weight: learned query term weights (TWEAK) applied in the first
// stage. Non-positive weights are dropped.
func WeightedQuery(weights map[string]float64) (query.Query, error) {
	terms := make([]string, 0, len(weights))
	for t, w := range weights {
		if w > 0 {
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		return nil, ErrEmptyQuery
	}
	sort.Strings(terms)
	qs := make([]query.Query, len(terms))
	for i, t := range terms {
		tq := bleve.NewTermQuery(t)
		tq.SetField(FieldAll)
		tq.SetBoost(weights[t])
		qs[i] = tq
	}
	return bleve.NewDisjunctionQuery(qs...), nil
}

var storedFields = []string{FieldTitle, FieldText, FieldMeta}

// SearchTiesByID runs req, a search by score from the first hit, on idx so
// that documents tied in score across any of the cuts (positions, at most
// req.Size) are chosen by document ID. Equal scores are common (short
// queries, documents alike in length and term counts); left in Bleve's
// internal document order, which follows how segments happened to merge,
// which tied documents fall inside a cut would differ between two indexes
// of the same corpus. Tied means equal under StableScore: Bleve sums a
// disjunction's term scores in an order that varies from document to
// document, so equal documents can differ in their scores' last bits, and
// even Bleve's sort by score then ID would choose by those bits.
//
// The search asks for tieSlack hits more than a cut at req.Size needs, so
// that a tied group crossing it is nearly always seen to end (on SemEval's
// questions one window search in six needed a second search when it asked
// for one hit more; one in two hundred with eight). When a
// tied group crosses a cut and ends within the hits, its members are all
// there and are ordered by ID; when it runs past the last hit, the search
// is repeated once, without stored fields, for 1024 hits past the last
// cut crossed: a tied group can hold the whole collection (a match_all
// query, a one-word query over alike documents), and one search must not
// load it. The hits up to the end of the last such group, but no further
// than those 1024 past its cut, are then ordered by StableScore and ID;
// later hits keep Bleve's order. A group still open there is so ordered by
// ID among the members Bleve puts first, and the rest of it follows in
// Bleve's order. That bound depends on the cuts alone, not on req.Size, so
// that requests of any size agree: the hits of a smaller request are the
// first hits of a larger one with the same cuts, as pages of one result
// list must be. Sorting every search by ID instead would make Bleve look
// up the ID of every matching document (40% slower on a 30,000-hit
// query).
func SearchTiesByID(ctx context.Context, idx bleve.Index, req *bleve.SearchRequest, cuts ...int) (*bleve.SearchResult, error) {
	if req.From != 0 || req.Size <= 0 {
		return Search(ctx, idx, req)
	}
	probe := *req
	if slices.Contains(cuts, req.Size) {
		// To see where a group tied with the last hit ends.
		probe.Size += min(tieSlack, math.MaxInt-req.Size)
	}
	res, err := Search(ctx, idx, &probe)
	if err != nil {
		return nil, err
	}
	end, last := tiedGroupsEnd(res.Hits, cuts)
	// Hits ordered by ID end this far from the last cut crossed.
	bound := last + min(maxTieHits, math.MaxInt-last)
	// Larger searches load no stored fields (a tied group can run to
	// thousands of hits); the fields of the hits kept are fetched after.
	bare := probe
	if bare.Highlight == nil {
		bare.Fields = nil
	}
	if last > 0 && end == len(res.Hits) && len(res.Hits) == bare.Size && bare.Size < bound {
		// One search as large as allowed, not a doubling series: its cost
		// is scoring every match, whatever the size.
		bare.Size = bound
		if res, err = Search(ctx, idx, &bare); err != nil {
			return nil, err
		}
		end, _ = tiedGroupsEnd(res.Hits, cuts)
	}
	if last > 0 {
		sort.SliceStable(res.Hits[:min(end, bound)], func(i, j int) bool {
			si, sj := StableScore(res.Hits[i].Score), StableScore(res.Hits[j].Score)
			if si != sj {
				return si > sj
			}
			return res.Hits[i].ID < res.Hits[j].ID
		})
	}
	res.Hits = res.Hits[:min(req.Size, len(res.Hits))]
	if bare.Size != probe.Size && len(bare.Fields) != len(req.Fields) {
		if err := FetchFields(ctx, idx, req.Fields, res.Hits); err != nil {
			return nil, err
		}
	}
	res.Request = req
	return res, nil
}

// FetchFields sets the stored fields of hits, which a search without
// Fields returned, as a search asking for them would, so a caller can
// fetch the fields of the few hits it shows or reads rather than of every
// hit it collects: read through one reader of idx's index where it has
// one (see fetchDirect), else by one search by document id. A hit whose document was
// deleted since its search gets none. Over an IndexAlias whose children
// hold documents with the same id, each hit gets the fields of its own
// child's document (matched by the hit's Index, the child's name), as
// its search would have returned them; two such children without names
// cannot be told apart, and their hits get one of the copies' fields, as
// do hits that name no index.
func FetchFields(ctx context.Context, idx bleve.Index, fields []string, hits search.DocumentMatchCollection) error {
	if len(hits) == 0 {
		return nil
	}
	if ok, err := fetchDirect(ctx, idx, fields, hits); ok || err != nil {
		return err
	}
	ids := HitIDs(hits)
	req := bleve.NewSearchRequestOptions(bleve.NewDocIDQuery(ids), len(ids), 0, false)
	req.Fields = fields
	res, err := idx.SearchInContext(ctx, req)
	if err != nil {
		return err
	}
	if res.Total > uint64(len(res.Hits)) {
		// An alias returns a document of each child holding the id:
		// more than the ids, and the first len(ids) may leave some out.
		req.Size = int(min(res.Total, math.MaxInt))
		if res, err = idx.SearchInContext(ctx, req); err != nil {
			return err
		}
	}
	type doc struct{ index, id string }
	byDoc := make(map[doc]map[string]any, len(res.Hits))
	byID := make(map[string]map[string]any, len(res.Hits))
	for _, h := range res.Hits {
		byDoc[doc{h.Index, h.ID}] = h.Fields
		byID[h.ID] = h.Fields
	}
	for _, h := range hits {
		if h.Index == "" {
			h.Fields = byID[h.ID]
		} else {
			h.Fields = byDoc[doc{h.Index, h.ID}]
		}
	}
	return nil
}

// maxTieHits is how far past the last cut it crosses SearchTiesByID
// orders a tied group by ID (see SearchTiesByID); its doc comment states
// the value, 1024, and must follow a change.
var maxTieHits = 1024 // a variable for tests

// tieSlack is how many hits past a cut at its size SearchTiesByID asks
// for: collecting a few more costs little beside a second search.
const tieSlack = 16

// tiedGroupsEnd reports the largest of the cuts that a tie (under
// StableScore) crosses in hits, in descending order of score, or 0 for
// none, and where the last such tied group ends (len(hits) when it runs
// to the last hit).
func tiedGroupsEnd(hits search.DocumentMatchCollection, cuts []int) (end, last int) {
	for _, k := range cuts {
		if k <= 0 || k >= len(hits) {
			continue
		}
		s := StableScore(hits[k-1].Score)
		if StableScore(hits[k].Score) != s {
			continue
		}
		last = max(last, k)
		e := k + 1
		for e < len(hits) && StableScore(hits[e].Score) == s {
			e++
		}
		end = max(end, e)
	}
	return end, last
}

// TopN returns the n best documents for q by BM25.
func (x *Index) TopN(ctx context.Context, q query.Query, n int) ([]Hit, error) {
	if n <= 0 {
		return nil, fmt.Errorf("index: candidate depth %d must be positive", n)
	}
	req := bleve.NewSearchRequestOptions(q, n, 0, false)
	req.Fields = storedFields
	res, err := SearchTiesByID(ctx, x, req, n)
	if err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	return HitsFrom(res.Hits), nil
}

// Given scores exactly the documents ids for q by BM25 and returns them all:
// matching documents by descending score (ties keep the given order), then
// documents that match no query term, in the given order. Ids the index
// does not hold are an error.
func (x *Index) Given(ctx context.Context, q query.Query, ids []string) ([]Hit, error) {
	dms, given, err := GivenHits(ctx, x, q, ids, storedFields)
	if err != nil {
		return nil, err
	}
	out := make([]Hit, len(dms))
	for i, h := range dms {
		out[i] = hitFrom(h)
		out[i].Rank, out[i].GivenRank = i+1, given[i]
	}
	return out, nil
}

// GivenHits scores exactly the documents ids of idx for q and returns
// them all with the stored fields asked for: the documents q matches by
// descending score (rounded by StableScore; ties keep the given order),
// then the others, scored 0, in the given order; and each hit's 1-based
// position in ids. A repeated id counts once; an id idx does not hold is
// an error. A nil q matches nothing.
func GivenHits(ctx context.Context, idx bleve.Index, q query.Query, ids []string, fields []string) (search.DocumentMatchCollection, []int, error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	pos := make(map[string]int, len(ids))
	var uniq []string
	for i, id := range ids {
		if _, dup := pos[id]; !dup {
			pos[id] = i
			uniq = append(uniq, id)
		}
	}
	scored := map[string]*search.DocumentMatch{}
	if q != nil {
		idq := bleve.NewDocIDQuery(uniq)
		idq.SetBoost(0)
		req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(idq, q), len(uniq), 0, false)
		req.Fields = fields
		res, err := idx.SearchInContext(ctx, req)
		if err != nil {
			return nil, nil, fmt.Errorf("index: search: %w", err)
		}
		for _, h := range res.Hits {
			h.Score = StableScore(h.Score)
			scored[h.ID] = h
		}
	}
	var matched, rest search.DocumentMatchCollection
	for _, id := range uniq {
		if h, ok := scored[id]; ok {
			matched = append(matched, h)
		} else {
			rest = append(rest, &search.DocumentMatch{ID: id})
		}
	}
	if len(rest) > 0 {
		// One search for the fields of every unmatched document, which
		// also tells which ids the index holds.
		req := bleve.NewSearchRequestOptions(bleve.NewDocIDQuery(HitIDs(rest)), len(rest), 0, false)
		req.Fields = fields
		res, err := idx.SearchInContext(ctx, req)
		if err != nil {
			return nil, nil, fmt.Errorf("index: search: %w", err)
		}
		found := make(map[string]*search.DocumentMatch, len(res.Hits))
		for _, h := range res.Hits {
			found[h.ID] = h
		}
		for _, h := range rest {
			f, ok := found[h.ID]
			if !ok {
				return nil, nil, fmt.Errorf("index: candidate %q is not in the index", h.ID)
			}
			h.Fields, h.Index = f.Fields, f.Index
		}
	}
	sort.SliceStable(matched, func(i, j int) bool {
		if matched[i].Score != matched[j].Score {
			return matched[i].Score > matched[j].Score
		}
		return pos[matched[i].ID] < pos[matched[j].ID]
	})
	out := append(matched, rest...)
	given := make([]int, len(out))
	for i, h := range out {
		given[i] = pos[h.ID] + 1
	}
	return out, given, nil
}

// HitIDs returns the hits' ids, in order.
func HitIDs(hits search.DocumentMatchCollection) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids
}

// HitsFrom converts Bleve hits (with stored title, text and meta fields
// requested) to Hits, in StableOrder.
func HitsFrom(dms search.DocumentMatchCollection) []Hit {
	StableOrder(dms)
	out := make([]Hit, len(dms))
	for i, h := range dms {
		out[i] = hitFrom(h)
		out[i].Rank = i + 1
	}
	return out
}

// StableOrder rounds the hits' scores with StableScore and orders them by
// descending score, ties by ID, in place.
func StableOrder(dms search.DocumentMatchCollection) {
	for _, h := range dms {
		h.Score = StableScore(h.Score)
	}
	sort.SliceStable(dms, func(i, j int) bool {
		if dms[i].Score != dms[j].Score {
			return dms[i].Score > dms[j].Score
		}
		return dms[i].ID < dms[j].ID
	})
}

// StableScore rounds a Bleve score to float32 precision. Bleve adds a
// disjunction's term scores in an order that follows the index's segment
// layout, which background merges make differ between two builds of the
// same collection, and so the last bits of a score differ too. Rounded, the
// same query on the same documents scores the same in every build (and,
// in StableOrder, ties rank by document ID, not by internal document
// number), so the features and fusion models built on first-stage scores
// are reproducible.
func StableScore(s float64) float64 { return float64(float32(s)) }

func hitFrom(h *search.DocumentMatch) Hit {
	hit := Hit{Doc: dataset.Doc{ID: h.ID}, Score: h.Score}
	hit.Title, _ = h.Fields[FieldTitle].(string)
	hit.Text, _ = h.Fields[FieldText].(string)
	hit.Metadata = StoredMeta(h.Fields)
	return hit
}

// StoredMeta decodes the document metadata in a hit's stored fields (the
// JSON under FieldMeta), or returns nil when there is none. The index wrote
// that JSON itself, so it is not checked again here.
func StoredMeta(fields map[string]any) map[string]any {
	raw, ok := fields[FieldMeta].(string)
	if !ok || raw == "" {
		return nil
	}
	if meta, ok := flatMeta(raw); ok {
		return meta
	}
	var meta map[string]any
	_ = json.Unmarshal([]byte(raw), &meta)
	return meta
}

// flatMeta decodes raw as json.Unmarshal would into a map, when raw is an
// object whose values are strings, numbers, booleans or nulls and none of
// its strings is escaped: the metadata stages read (a forum post's user,
// position, date), several times faster than encoding/json, whose
// decoding was a tenth of a window's reranking where stages read it. Its
// keys and strings are raw's own bytes, not copies. ok is false for
// anything else, which encoding/json then decodes.
func flatMeta(raw string) (meta map[string]any, ok bool) {
	if strings.IndexByte(raw, '\\') >= 0 || !utf8.ValidString(raw) {
		return nil, false
	}
	i := skipSpace(raw, 0)
	if i == len(raw) || raw[i] != '{' {
		return nil, false
	}
	meta = make(map[string]any, min(strings.Count(raw, ",")+1, 64)) // commas in strings count too
	if i = skipSpace(raw, i+1); i < len(raw) && raw[i] == '}' {
		return meta, skipSpace(raw, i+1) == len(raw)
	}
	for {
		key, next, ok := jsonString(raw, i)
		if !ok {
			return nil, false
		}
		if i = skipSpace(raw, next); i == len(raw) || raw[i] != ':' {
			return nil, false
		}
		if i = skipSpace(raw, i+1); i == len(raw) {
			return nil, false
		}
		switch c := raw[i]; {
		case c == '"':
			v, next, ok := jsonString(raw, i)
			if !ok {
				return nil, false
			}
			meta[key], i = v, next
		case strings.HasPrefix(raw[i:], "true"):
			meta[key], i = true, i+4
		case strings.HasPrefix(raw[i:], "false"):
			meta[key], i = false, i+5
		case strings.HasPrefix(raw[i:], "null"):
			meta[key], i = nil, i+4
		default:
			end := i
			for end < len(raw) && strings.IndexByte("+-.0123456789eE", raw[end]) >= 0 {
				end++
			}
			if !jsonNumber(raw[i:end]) {
				return nil, false
			}
			f, err := strconv.ParseFloat(raw[i:end], 64)
			if err != nil {
				return nil, false
			}
			meta[key], i = f, end
		}
		if i = skipSpace(raw, i); i == len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return meta, skipSpace(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
}

// jsonString returns the unescaped JSON string starting at raw[i] (its
// quote) and the position after it; ok is false if there is none there
// or it holds a control character, which JSON must escape.
func jsonString(raw string, i int) (s string, next int, ok bool) {
	if i >= len(raw) || raw[i] != '"' {
		return "", 0, false
	}
	n := strings.IndexByte(raw[i+1:], '"')
	if n < 0 {
		return "", 0, false
	}
	s = raw[i+1 : i+1+n]
	for j := range len(s) {
		if s[j] < 0x20 {
			return "", 0, false
		}
	}
	return s, i + n + 2, true
}

// jsonNumber reports whether s is a number as JSON writes one:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumber(s string) bool {
	digits := func(i int) int { // the position after the digits at i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(i + 1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if j := digits(i); j > i {
			i = j
		} else {
			return false
		}
	}
	return i == len(s)
}

// skipSpace returns the position of the first byte at or after i that is
// not JSON white space.
func skipSpace(raw string, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// fetchDirect is FetchFields through one reader of idx's own index, each
// hit's fields loaded as Bleve's search loads them
// (bleve.LoadAndHighlightAllFields), without a search by id; ok is false
// when idx has no index of its own to read (an alias of several indexes,
// a remote shard), for FetchFields's search then.
func fetchDirect(ctx context.Context, idx bleve.Index, fields []string, hits search.DocumentMatchCollection) (ok bool, err error) {
	adv, err := idx.Advanced()
	if err != nil || adv == nil {
		return false, nil
	}
	r, err := readerOf(adv)
	if err != nil {
		return true, err
	}
	defer r.Close()
	req := &bleve.SearchRequest{Fields: fields}
	stored := newStoredReader(r, fields)
	// The hits' documents are read on every core, in runs of at least
	// fetchRun: a reader serves concurrent searches, and a window's
	// stored fields were most of what its reranking did on one core
	// before the stages.
	return true, runs.Do(len(hits), fetchRun, func(lo, hi int) error {
		for _, h := range hits[lo:hi] {
			if err := ctx.Err(); err != nil {
				return err
			}
			h.Fields = nil
			if stored != nil && stored.load(h) {
				continue
			}
			err, _ := bleve.LoadAndHighlightAllFields(h, req, "", r, nil)
			if errors.Is(err, bleve.ErrorIndexReadInconsistency) {
				// Deleted since its search: no fields, as FetchFields
				// says.
				h.Fields = nil
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// fetchRun is the fewest hits fetchDirect reads on a core of its own.
const fetchRun = 16
