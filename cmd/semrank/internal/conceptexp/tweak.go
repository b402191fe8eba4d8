package conceptexp

import (
	"context"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/tweak"
)

// TweakTrainer returns a function training TWEAK (the lead's
// models/tweak, default configuration) on given training lists of ds:
// document frequencies come from texts (the same unlabelled corpus as the
// other models), the query-log feature from the training queries only.
// Candidates without a judgment count as not relevant, as the concept
// models' lists count them (concept.FromDataset).
func TweakTrainer(ds *dataset.Dataset, texts []string) func(ctx context.Context, train []concept.Judged) (*tweak.Model, error) {
	ds = ds.WithUnjudgedNotRelevant()
	df := tweak.CountDF(texts)
	return func(ctx context.Context, train []concept.Judged) (*tweak.Model, error) {
		cfg := tweak.DefaultConfig()
		st := tweak.Stats{DF: df}
		var qids, qtexts []string
		for _, l := range train {
			qids = append(qids, l.QueryID)
			qtexts = append(qtexts, l.Query)
		}
		if cfg.QueryLog {
			st.QF = tweak.CountDF(qtexts)
		}
		set, err := tweak.NewSet(ds, qids, st, cfg.QueryLog)
		if err != nil {
			return nil, err
		}
		return tweak.Train(ctx, set, cfg, tweak.Options{})
	}
}

// tweakScores returns TWEAK cosine scores of the lists.
func tweakScores(m *tweak.Model, lists []concept.Judged) [][]float64 {
	out := make([][]float64, len(lists))
	for i, l := range lists {
		q := m.QueryVector(l.Query)
		out[i] = make([]float64, len(l.Docs))
		for j, d := range l.Docs {
			out[i][j] = tweak.Cosine(q, m.QueryVector(d))
		}
	}
	return out
}
