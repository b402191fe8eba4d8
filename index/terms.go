package index

import (
	"encoding/binary"
	"errors"
	"slices"
	"strconv"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/internal/termorder"
)

// TermsPayload is the name of the built-in payload holding each document's
// analyzed term counts (title and text together). Lexical rerank stages
// read it instead of analyzing candidate text at query time, which would
// otherwise cost more than the search itself.
const TermsPayload = "terms"

// TermsEncoder computes the TermsPayload at index time. Its zero value
// counts the terms of semrank's analyzer, as a semrank index holds them;
// over an index semrank did not build, Attach counts those of the
// analyzer its mapping gives the fields read (Analyzer, Tokens).
type TermsEncoder struct {
	// Analyzer names the analyzer Tokens applies, as the index's mapping
	// names it (Stats.Analyzer); "" for semrank's.
	Analyzer string
	// Tokens analyzes a document's text; nil for semrank's analyzer.
	Tokens func(text string) []string
}

// PayloadName implements PayloadEncoder.
func (TermsEncoder) PayloadName() string { return TermsPayload }

// ModelID implements PayloadEncoder: the analyzer is the model. For
// semrank's, the id follows the version of its behaviour
// (analyzers.Version), and an index whose term counts came from another
// version is refused by Add; the form "semrank_en-v1" predates
// analyzers.ID and is kept so that existing indexes stay valid. Another
// analyzer's id is "bleve-" and its name.
func (e TermsEncoder) ModelID() string {
	if e.Analyzer != "" {
		return "bleve-" + e.Analyzer
	}
	return analyzers.Name + "-v" + strconv.Itoa(analyzers.Version)
}

// EncodePayload implements PayloadEncoder. semrank's analysis of the
// text goes through the shared cache (analyzers.CachedTokens), where the
// TWEAK and concept encoders (LSA, S2Net, DSE), run after it on the same
// text, find it: a document is analyzed for its payloads once, not once
// each.
func (e TermsEncoder) EncodePayload(d dataset.Doc) ([]byte, error) {
	if e.Tokens != nil {
		return EncodeTermCounts(e.Tokens(d.FullText())), nil
	}
	return EncodeTermCounts(analyzers.CachedTokens(d.FullText())), nil
}

// CountTerms returns the distinct terms of tokens with how often each
// occurs, sorted by term, as DecodeTermList returns EncodeTermCounts's
// output. The tokens are sorted (a copy) and counted in runs, which for a
// document's few dozen terms allocates less than a map.
func CountTerms(tokens []string) []TermCount {
	sorted := slices.Sorted(slices.Values(tokens))
	out := make([]TermCount, 0, len(sorted))
	for i := 0; i < len(sorted); {
		t, n := sorted[i], 1
		for i+n < len(sorted) && sorted[i+n] == t {
			n++
		}
		out = append(out, TermCount{t, n})
		i += n
	}
	return out
}

// EncodeTermCounts encodes the counts of tokens (CountTerms), terms
// sorted: uvarint(n) then n × (uvarint(len), term, uvarint(count)).
func EncodeTermCounts(tokens []string) []byte {
	counts := CountTerms(tokens)
	b := binary.AppendUvarint(nil, uint64(len(counts)))
	for _, tc := range counts {
		b = binary.AppendUvarint(b, uint64(len(tc.Term)))
		b = append(b, tc.Term...)
		b = binary.AppendUvarint(b, uint64(tc.Count))
	}
	return b
}

var errTerms = errors.New("index: malformed term-count payload")

// TermCount is one term of a document and how often it occurs there.
type TermCount struct {
	Term  string
	Count int
}

// DecodeTermList decodes EncodeTermCounts's output into its terms, in the
// sorted order the encoder wrote them: scorers that sum over a document's
// terms can then sum in a fixed order, which makes their rounding, and so
// their scores, the same from run to run, without sorting at query time.
func DecodeTermList(b []byte) ([]TermCount, error) {
	var out []TermCount
	err := EachTermCount(b, func(n int) { out = make([]TermCount, 0, n) }, func(term []byte, count int) {
		out = append(out, TermCount{string(term), count})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EachTermCount calls size with the number of terms in b (EncodeTermCounts's
// output), then fn with each term and its count in the encoder's sorted
// order, the term's bytes b's own: a scorer that keeps few of a document's
// terms as strings allocates no string for the others. A malformed b is
// DecodeTermList's error, after calls for the terms before the damage.
func EachTermCount(b []byte, size func(n int), fn func(term []byte, count int)) error {
	n, k := uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return errTerms
	}
	b = b[k:]
	size(int(n))
	var prev []byte
	for i := uint64(0); i < n; i++ {
		l, k := uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return errTerms
		}
		term := b[k : k+int(l) : k+int(l)]
		b = b[k+int(l):]
		c, k := uvarint(b)
		if k <= 0 || c == 0 || c > 1<<31 {
			return errTerms
		}
		b = b[k:]
		if i > 0 && !termorder.After(term, prev) {
			return errTerms // not sorted, or a term twice
		}
		prev = term
		fn(term, int(c))
	}
	if len(b) != 0 {
		return errTerms
	}
	return nil
}

// DecodeTermCounts decodes EncodeTermCounts's output into a map.
func DecodeTermCounts(b []byte) (map[string]int, error) {
	list, err := DecodeTermList(b)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(list))
	for _, tc := range list {
		out[tc.Term] = tc.Count
	}
	return out, nil
}

// uvarint is binary.Uvarint with the one-byte case, a term's length and
// almost every count, decided before its loop.
func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}
