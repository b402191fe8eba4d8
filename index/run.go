package index

import (
	"context"
	"errors"
	"fmt"

	"github.com/semrank/semrank/eval"
)

// Candidates returns the first-stage candidates of one query of ds: the
// dataset's given candidate list scored by BM25 when it has one, else the
// top depth documents of the whole index. A query with no searchable terms
// gets its given candidates in the given order, or none.
func (x *Index) Candidates(ctx context.Context, ds *eval.Dataset, q eval.Query, depth int) ([]Hit, error) {
	bq, err := TextQuery(q.FullText())
	if errors.Is(err, ErrEmptyQuery) {
		bq = nil
	} else if err != nil {
		return nil, err
	}
	if ds.Candidates != nil {
		ids := make([]string, 0, len(ds.Candidates.Ranking(q.ID)))
		for _, e := range ds.Candidates.Ranking(q.ID) {
			ids = append(ids, e.DocID)
		}
		return x.Given(ctx, bq, ids)
	}
	if bq == nil {
		return nil, nil
	}
	return x.TopN(ctx, bq, depth)
}

// FirstStageRun runs every query of ds through Candidates and returns the
// BM25 run. Scores are made distinct (ties broken by rank) so that any
// evaluator orders the run as semrank does.
func (x *Index) FirstStageRun(ctx context.Context, ds *eval.Dataset, depth int, progress Progress) (eval.Run, error) {
	run := eval.NewRun()
	for i, q := range ds.Queries {
		hits, err := x.Candidates(ctx, ds, q, depth)
		if err != nil {
			return run, fmt.Errorf("query %q: %w", q.ID, err)
		}
		for _, h := range hits {
			run.Add(q.ID, eval.Entry{DocID: h.ID, Rank: h.Rank, Score: DistinctScore(h.Score, h.Rank)})
		}
		if progress != nil {
			progress(i+1, len(ds.Queries))
		}
	}
	return run, nil
}

// DistinctScore returns a score that orders like (score desc, rank asc)
// and never ties for different ranks: written runs keep semrank's order
// under trec_eval and the SemEval scorer alike.
func DistinctScore(score float64, rank int) float64 {
	return score - float64(rank)*1e-9
}
