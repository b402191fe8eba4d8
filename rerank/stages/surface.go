package stages

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/semrank/semrank/rerank"
)

// surfaceFeatures computes the features Surface documents, by name.
var surfaceFeatures = map[string]func(string) float64{
	"questions": func(s string) float64 { return float64(strings.Count(s, "?")) },
	"urls":      func(s string) float64 { return float64(countURLs(s)) },
	"digits": func(s string) float64 {
		n := 0
		for _, r := range s {
			if r >= '0' && r <= '9' {
				n++
			}
		}
		return math.Log1p(float64(n))
	},
	"chars": func(s string) float64 { return math.Log1p(float64(len(s))) },
}

// countURLs returns the number of links in s: the non-overlapping matches
// of the regular expression (?i)\b(?:https?://|www\.)\S+ (Go's syntax:
// \b and \S are ASCII's), found by one scan instead of the regexp engine,
// which took a tenth of a SemEval recipe's reranking.
func countURLs(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		// Only w, W, h and H fold to a link's first letter ('|0x20'
		// lower-cases them and maps no other byte there): most bytes end
		// here.
		if c := s[i] | 0x20; c != 'w' && c != 'h' || i > 0 && isWordByte(s[i-1]) {
			continue
		}
		k := urlPrefix(s[i:])
		if k == 0 || i+k == len(s) || isSpaceByte(s[i+k]) {
			continue
		}
		n++
		for i += k; i < len(s) && !isSpaceByte(s[i]); i++ {
		}
	}
	return n
}

// urlPrefix returns the length of the http://, https:// or www. that s
// starts with, in any case ((?i): an s may also be ſ, U+017F, which folds
// to it), or 0.
func urlPrefix(s string) int {
	if len(s) >= 4 && strings.EqualFold(s[:4], "www.") {
		return 4
	}
	if len(s) < 4 || !strings.EqualFold(s[:4], "http") {
		return 0
	}
	rest := s[4:]
	switch {
	case len(rest) >= 1 && (rest[0] == 's' || rest[0] == 'S') && strings.HasPrefix(rest[1:], "://"):
		return 8
	case strings.HasPrefix(rest, "ſ://"):
		return 4 + len("ſ://")
	case strings.HasPrefix(rest, "://"):
		return 7
	}
	return 0
}

// isWordByte reports whether b is an ASCII word character (\w).
func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// isSpaceByte reports whether b is ASCII white space as \s means it:
// tab, newline, form feed, carriage return or space.
func isSpaceByte(b byte) bool {
	return b == '\t' || b == '\n' || b == '\f' || b == '\r' || b == ' '
}

func init() {
	rerank.RegisterStage("surface", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		var o FeatureOptions
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		f := o.Feature
		fn, ok := surfaceFeatures[f]
		if !ok {
			return nil, fmt.Errorf(`surface: option "feature" must be questions, urls, digits or chars, not %q`, f)
		}
		return &Surface{name: spec.DisplayName("surface:" + f), fn: fn}, nil
	})
}

// FeatureOptions are the options of the surface and thread stages: the
// one feature the stage computes.
type FeatureOptions struct {
	Feature string `yaml:"feature"`
}

// Surface computes one surface feature of each candidate's raw text
// (title and text, before analysis), chosen by option "feature":
//
//	questions  number of question marks (an answer that asks back is rarely good)
//	urls       number of links (answers often point to a source)
//	digits     log(1 + number of digits) (prices, phone numbers, dates)
//	chars      log(1 + length in characters)
type Surface struct {
	name string
	fn   func(string) float64
}

// Name implements rerank.Stage.
func (s *Surface) Name() string { return s.name }

// ReadsMetadata implements rerank.MetadataReader: the stage reads text
// alone.
func (*Surface) ReadsMetadata() bool { return false }

// Score implements rerank.Stage.
func (s *Surface) Score(_ context.Context, _ rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	out := make([]float64, len(cands))
	for i, c := range cands {
		out[i] = s.fn(c.FullText())
	}
	return out, nil
}
