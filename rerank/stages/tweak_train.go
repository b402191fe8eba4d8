package stages

import (
	"context"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterTrainer(tweak.Method, fitTWEAK, "loss", "alpha", "query_log")
}

// fitTWEAK trains a TWEAK model for recipes. Options: loss (sse, log,
// preference; default sse, which did best on SemEval B in
// docs/RESULTS.md), alpha (L2 weight, default 0.1), query_log (default
// true). Document frequencies are counted over the training corpus and
// frozen into the model. A judged query's candidates that its judgments
// leave out count as not relevant (eval.Dataset.WithUnjudgedNotRelevant).
func fitTWEAK(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
	lossName, err := spec.Str("loss", string(tweak.LossSSE))
	if err != nil {
		return spec, err
	}
	loss, err := tweak.ParseLoss(lossName)
	if err != nil {
		return spec, err
	}
	alpha, err := spec.Float("alpha", 0.1)
	if err != nil {
		return spec, err
	}
	useLog, err := spec.Bool("query_log", true)
	if err != nil {
		return spec, err
	}
	if err := needJudged(in); err != nil {
		return spec, err
	}
	if in.Train.Candidates == nil {
		// A judged dataset without candidates.trec: say how to write one.
		return spec, tweak.ErrNoCandidates
	}
	texts := make([]string, len(in.Train.Corpus))
	for i, d := range in.Train.Corpus {
		texts[i] = d.FullText()
	}
	st := tweak.Stats{DF: tweak.CountDF(texts)}
	if useLog {
		qs := make([]string, len(in.Train.Queries))
		for i, q := range in.Train.Queries {
			qs[i] = q.FullText()
		}
		st.QF = tweak.CountDF(qs)
	}
	// TWEAK's losses read judged candidates only: count the rest as
	// not relevant, as the other trainers and the evaluation do.
	train := in.Train.WithUnjudgedNotRelevant()
	set, err := tweak.NewSet(train, judgedIDs(train), st, useLog)
	if err != nil {
		return spec, err
	}
	m, err := tweak.Train(ctx, set, tweak.Config{Loss: loss, Alpha: alpha, QueryLog: useLog, MaxIterations: 200}, tweak.Options{})
	if err != nil {
		return spec, err
	}
	return saveModel(spec, in, tweak.Method, m.Save)
}

// judgedIDs returns the ids of ds's judged queries that have candidates.
// The list is never nil, which tweak.NewSet would take for every judged
// query in ds's candidate lists, known to ds.Queries or not: with none,
// NewSet reports that no judged query has candidates.
func judgedIDs(ds *eval.Dataset) []string {
	out := []string{}
	if ds.Candidates == nil {
		return out
	}
	for _, q := range ds.Queries {
		if _, ok := ds.Qrels[q.ID]; ok && len(ds.Candidates.Ranking(q.ID)) > 0 {
			out = append(out, q.ID)
		}
	}
	return out
}
