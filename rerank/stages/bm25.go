package stages

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage("bm25", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		if env.Stats == nil {
			return nil, errors.New("bm25 needs collection statistics: build the pipeline against a semrank index with rerank.EnvFor(idx) (index.Open or index.Create); a plain bleve.Index has none")
		}
		o := BM25Options{K1: 1.2, B: 0.75}
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		if err := o.check(); err != nil {
			return nil, fmt.Errorf("bm25: %w", err)
		}
		return &BM25{Stats: env.Stats, Payloads: env.Payloads, Analyze: env.Analyze, K1: o.K1, B: o.B}, nil
	})
}

// check refuses a k1 or b outside BM25's ranges, where a score can divide
// by zero or by a negative length norm: NaN would fail every search.
func (o BM25Options) check() error {
	if !(o.K1 >= 0) || math.IsInf(o.K1, 0) {
		return fmt.Errorf("option k1 %g: want a finite number ≥ 0 (default 1.2)", o.K1)
	}
	if !(o.B >= 0 && o.B <= 1) {
		return fmt.Errorf("option b %g: want a number from 0 to 1 (default 0.75)", o.B)
	}
	return nil
}

// BM25Options are the options of a bm25 stage: BM25's k1 (default 1.2)
// and b (default 0.75).
type BM25Options struct {
	K1 float64 `yaml:"k1"`
	B  float64 `yaml:"b"`
}

// BM25 is textbook Okapi BM25 recomputed over the candidates: tf is the raw
// term count, idf = log(1 + (N − df + 0.5)/(df + 0.5)) from the index, and
// the average document length is the candidates' own (the window is what
// is being ranked). Bleve's BM25 differs (√tf, idf applied twice in compound
// queries, length from distinct terms), so fusion gets both. Options k1
// (≥ 0, default 1.2) and b (0 to 1, default 0.75) are BM25's.
type BM25 struct {
	Stats    rerank.TermStats
	Payloads rerank.Payloads
	Analyze  func(string) []string // as TFIDF's
	K1, B    float64
}

// Name implements rerank.Stage.
func (*BM25) Name() string { return "bm25" }

// ReadsMetadata implements rerank.MetadataReader: the stage reads text
// alone.
func (*BM25) ReadsMetadata() bool { return false }

// ReadsDocs implements rerank.DocReader, as TFIDF's.
func (s *BM25) ReadsDocs(ctx context.Context, ids []string, reads []bool) error {
	return termsMissingIn(ctx, s.Payloads, ids, reads)
}

// WindowPayloads implements rerank.PayloadReader: the term counts.
func (s *BM25) WindowPayloads() (rerank.Payloads, []rerank.PayloadKind) {
	return termsPayload(s.Payloads).windowPayloads()
}

// bm25Query is the query's distinct terms, sorted, and their IDFs in a
// collection of n documents.
type bm25Query struct {
	n     uint64
	terms []string
	idf   []float64
}

// weighQuery returns q's terms and their IDFs in a collection of n
// documents.
func (s *BM25) weighQuery(q rerank.Query, n uint64) (bm25Query, error) {
	qterms := map[string]bool{}
	for _, t := range tokens(s.Analyze, q.Text) {
		qterms[t] = true
	}
	idf := make(map[string]float64, len(qterms))
	for t := range qterms {
		df, err := s.Stats.DocFreq(t)
		if err != nil {
			return bm25Query{}, err
		}
		idf[t] = math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
	}
	pq := bm25Query{n: n, terms: slices.Sorted(maps.Keys(idf))} // a fixed order: sums round the same every run
	pq.idf = make([]float64, len(pq.terms))
	for j, t := range pq.terms {
		pq.idf[j] = idf[t]
	}
	return pq, nil
}

// query returns q's terms and IDFs, once a window (prepared).
func (s *BM25) query(ctx context.Context, q rerank.Query) (bm25Query, error) {
	return prepared(ctx, s, q, func() (bm25Query, error) {
		n, err := s.Stats.DocCount()
		if err != nil {
			return bm25Query{}, err
		}
		return s.weighQuery(q, n)
	})
}

// PrepareQuery implements rerank.QueryPreparer: the query's terms and
// their IDFs.
func (s *BM25) PrepareQuery(ctx context.Context, q rerank.Query) { _, _ = s.query(ctx, q) }

// Score implements rerank.Stage.
func (s *BM25) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	n, err := s.Stats.DocCount()
	if err != nil {
		return nil, err
	}
	pq, err := s.query(ctx, q)
	if err != nil {
		return nil, err
	}
	if pq.n != n {
		// Prepared against another document count: weighed again.
		if pq, err = s.weighQuery(q, n); err != nil {
			return nil, err
		}
	}
	counts, totals, err := windowCounts(ctx, s.Payloads, s.Stats, s.Analyze, cands, pq.terms)
	if err != nil {
		return nil, err
	}
	lens := make([]float64, len(cands))
	for i, n := range totals {
		lens[i] = float64(n)
	}
	return okapi(counts, lens, pq.idf, nil, s.K1, s.B), nil
}

// okapi returns each candidate's BM25 sum over the terms: Σ_j w_j·idf_j ·
// tf·(k1+1) / (tf + k1·(1−b+b·len/avgdl)), in term order, with tf =
// counts[i][j], len = lens[i], avgdl the candidates' mean length (1 when
// it is 0), and w_j = weights[j] (1 when weights is nil).
func okapi(counts [][]int, lens, idf, weights []float64, k1, b float64) []float64 {
	avg := 0.0
	for _, l := range lens {
		avg += l
	}
	avg /= float64(max(len(lens), 1))
	if avg == 0 {
		avg = 1
	}
	out := make([]float64, len(counts))
	for i := range counts {
		norm := k1 * (1 - b + b*lens[i]/avg)
		for j, tf := range counts[i] {
			if tf == 0 {
				continue
			}
			w := idf[j]
			if weights != nil {
				w = weights[j] * idf[j]
			}
			out[i] += w * float64(tf) * (k1 + 1) / (float64(tf) + norm)
		}
	}
	return out
}
