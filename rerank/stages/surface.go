package stages

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/semrank/semrank/rerank"
)

// surfaceFeatures computes the features Surface documents, by name.
var surfaceFeatures = map[string]func(string) float64{
	"questions": func(s string) float64 { return float64(strings.Count(s, "?")) },
	"urls":      func(s string) float64 { return float64(len(urlRE.FindAllStringIndex(s, -1))) },
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

var urlRE = regexp.MustCompile(`(?i)\b(?:https?://|www\.)\S+`)

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

// Score implements rerank.Stage.
func (s *Surface) Score(_ context.Context, _ rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	out := make([]float64, len(cands))
	for i, c := range cands {
		out[i] = s.fn(c.FullText())
	}
	return out, nil
}
