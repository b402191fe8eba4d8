package stages

import (
	"context"
	"maps"

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
// frozen into the model.
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
	train := withUnjudgedNegative(in.Train)
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

// withUnjudgedNegative returns ds with every candidate of a judged query
// that its judgments leave out judged not relevant (grade 0), as the
// other trainers (concept.FromDataset, the fusion) and the evaluation
// count it. TWEAK's losses read judged candidates only: over
// full-retrieval lists whose judgments name the relevant documents alone
// (CACM's, most BEIR sets'), it would see no example of a document not to
// rank. ds is returned as it is when nothing is left out (SemEval's lists
// are judged whole).
func withUnjudgedNegative(ds *eval.Dataset) *eval.Dataset {
	if ds.Candidates == nil {
		return ds
	}
	var out eval.Qrels
	for _, qid := range ds.Candidates.QueryIDs() {
		judged, ok := ds.Qrels[qid]
		if !ok {
			continue
		}
		for _, e := range ds.Candidates.Ranking(qid) {
			if _, ok := judged[e.DocID]; ok {
				continue
			}
			if out == nil {
				out = make(eval.Qrels, len(ds.Qrels))
				for q, m := range ds.Qrels {
					out[q] = maps.Clone(m)
				}
			}
			out.Add(qid, e.DocID, 0)
		}
	}
	if out == nil {
		return ds
	}
	c := *ds
	c.Qrels = out
	return &c
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
