package stages

import (
	"context"
	"errors"
	"math"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage("tfidf", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		if env.Stats == nil {
			return nil, errors.New("tfidf needs collection statistics (an index)")
		}
		return &TFIDF{Stats: env.Stats}, nil
	})
}

// TFIDF scores candidates by the cosine of query and document TF-IDF
// vectors over the index's analyzed terms, with tf = 1 + log(count) and
// idf = log(N / df): the classic vector-space baseline the papers compare
// against.
type TFIDF struct {
	Stats rerank.TermStats
}

// Name implements rerank.Stage.
func (*TFIDF) Name() string { return "tfidf" }

// Score implements rerank.Stage.
func (t *TFIDF) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	n, err := t.Stats.DocCount()
	if err != nil {
		return nil, err
	}
	idf := map[string]float64{}
	weigh := func(text string) (map[string]float64, error) {
		counts := map[string]int{}
		for _, tok := range analyzers.Tokens(text) {
			counts[tok]++
		}
		v := make(map[string]float64, len(counts))
		for term, c := range counts {
			w, ok := idf[term]
			if !ok {
				df, err := t.Stats.DocFreq(term)
				if err != nil {
					return nil, err
				}
				w = math.Log((float64(n) + 1) / (float64(df) + 1))
				idf[term] = w
			}
			v[term] = (1 + math.Log(float64(c))) * w
		}
		return v, nil
	}
	qv, err := weigh(q.Text)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(cands))
	for i, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dv, err := weigh(c.FullText())
		if err != nil {
			return nil, err
		}
		out[i] = Cosine(qv, dv)
	}
	return out, nil
}

// Cosine returns the cosine of two sparse vectors (0 when either is zero).
func Cosine(a, b map[string]float64) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	dot, na, nb := 0.0, 0.0, 0.0
	for k, v := range a {
		dot += v * b[k]
		na += v * v
	}
	for _, v := range b {
		nb += v * v
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
