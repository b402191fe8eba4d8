package stages

import (
	"context"
	"maps"
	"slices"

	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage("overlap", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		return &Overlap{Payloads: env.Payloads, Stats: env.Stats, Analyze: env.Analyze}, nil
	})
}

// Overlap scores a candidate by the fraction of the query's distinct terms
// it contains: a cheap, length-independent lexical feature for fusion.
type Overlap struct {
	Payloads rerank.Payloads
	Stats    rerank.TermStats      // names Analyze's analysis, as TFIDF's
	Analyze  func(string) []string // as TFIDF's
}

// Name implements rerank.Stage.
func (*Overlap) Name() string { return "overlap" }

// ReadsMetadata implements rerank.MetadataReader: the stage reads text
// alone.
func (*Overlap) ReadsMetadata() bool { return false }

// ReadsDocs implements rerank.DocReader, as TFIDF's.
func (s *Overlap) ReadsDocs(ctx context.Context, ids []string, reads []bool) error {
	return termsMissingIn(ctx, s.Payloads, ids, reads)
}

// WindowPayloads implements rerank.PayloadReader: the term counts.
func (s *Overlap) WindowPayloads() (rerank.Payloads, []rerank.PayloadKind) {
	return termsPayload(s.Payloads).windowPayloads()
}

// Score implements rerank.Stage.
func (s *Overlap) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	qterms := map[string]bool{}
	for _, t := range tokens(s.Analyze, q.Text) {
		qterms[t] = true
	}
	out := make([]float64, len(cands))
	if len(qterms) == 0 {
		return out, nil
	}
	counts, _, err := windowCounts(ctx, s.Payloads, s.Stats, s.Analyze, cands, slices.Sorted(maps.Keys(qterms)))
	if err != nil {
		return nil, err
	}
	for i := range cands {
		hit := 0
		for _, n := range counts[i] {
			if n > 0 {
				hit++
			}
		}
		out[i] = float64(hit) / float64(len(qterms))
	}
	return out, nil
}
