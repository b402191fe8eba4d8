package stages

import (
	"context"
	"math"

	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage("length", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		return &Length{Payloads: env.Payloads, Stats: env.Stats, Analyze: env.Analyze}, nil
	})
}

// Length scores a candidate by log(1 + its number of analyzed terms). On
// its own it ranks nothing; as a fusion feature it lets the fusion learn
// whether longer answers tend to be better (in forum data they do).
type Length struct {
	Payloads rerank.Payloads
	Stats    rerank.TermStats      // names Analyze's analysis, as TFIDF's
	Analyze  func(string) []string // as TFIDF's
}

// Name implements rerank.Stage.
func (*Length) Name() string { return "length" }

// ReadsMetadata implements rerank.MetadataReader: the stage reads text
// alone.
func (*Length) ReadsMetadata() bool { return false }

// ReadsDocs implements rerank.DocReader, as TFIDF's.
func (s *Length) ReadsDocs(ctx context.Context, ids []string, reads []bool) error {
	return termsMissingIn(ctx, s.Payloads, ids, reads)
}

// WindowPayloads implements rerank.PayloadReader: the term counts.
func (s *Length) WindowPayloads() (rerank.Payloads, []rerank.PayloadKind) {
	return termsPayload(s.Payloads).windowPayloads()
}

// Score implements rerank.Stage.
func (s *Length) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	_, totals, err := windowCounts(ctx, s.Payloads, s.Stats, s.Analyze, cands, nil)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(cands))
	for i, n := range totals {
		out[i] = math.Log1p(float64(n))
	}
	return out, nil
}
