package stages

import (
	"context"
	"errors"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/ssg"
	"github.com/semrank/semrank/models/topics"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage("ssg", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		space, err := loadSpace(spec, env)
		if err != nil {
			return nil, err
		}
		tp, err := spec.Str("topics", "")
		if err != nil {
			return nil, err
		}
		if tp == "" {
			return nil, &rerank.NeedsModelError{Type: "ssg", What: "option topics: a topics model"}
		}
		tm, err := rerank.LoadModel(env, rerank.Resolve(env.Dir, tp), topics.Read)
		if err != nil {
			return nil, err
		}
		var cfg ssg.Config
		for _, o := range []struct {
			name string
			dst  *int
		}{{"k", &cfg.K}, {"hops", &cfg.Hops}, {"seeds", &cfg.Seeds}, {"max_iter", &cfg.MaxIter}} {
			if *o.dst, err = spec.Int(o.name, 0); err != nil {
				return nil, err
			}
		}
		for _, o := range []struct {
			name string
			dst  *float64
		}{{"dropout", &cfg.Dropout}, {"max_dist", &cfg.MaxDist}, {"mu_pp", &cfg.MuPP}, {"mu_np", &cfg.MuNP}, {"tol", &cfg.Tol}, {"damping", &cfg.Damping}} {
			if *o.dst, err = spec.Float(o.name, 0); err != nil {
				return nil, err
			}
		}
		m, err := ssg.New(space, tm, cfg)
		if err != nil {
			return nil, err
		}
		coll, err := spec.Str("collection", "")
		if err != nil {
			return nil, err
		}
		if coll != "" {
			ds, err := dataset.Load(rerank.Resolve(env.Dir, coll))
			if err != nil {
				return nil, err
			}
			var texts []string
			for _, q := range ds.Queries {
				texts = append(texts, q.FullText())
			}
			for _, d := range ds.Corpus {
				texts = append(texts, d.FullText())
			}
			m.SetCollection(texts)
		}
		return &SSG{Model: m}, nil
	})
}

// SSG scores candidates by their label after soft-seeded label
// propagation on the query-induced WMD graph over the candidate list
// (Srivastava & Datt, 2017). Options: topics (required), k, hops, seeds,
// dropout (0: SSG-WD; > 0: SSG-D), max_dist, mu_pp, mu_np, tol, max_iter,
// damping, and collection: a BEIR directory whose queries and documents
// the graphs may draw neighbours from besides the candidates (the paper's
// setting). A query with no word that has a vector leaves all candidates
// tied at 0. When the spec names no word vectors (model) or no topic
// model (option topics), rerank.TrainStage trains them from unlabeled
// in-domain text, as for WMD (whose training options it shares), the
// topic model with options topics_k (default 50) and topics_gamma
// (default 1.1), as semrank train topics; both are written into
// TrainInput.Dir and shared by stages trained on the same text with the
// same settings.
type SSG struct {
	Model *ssg.Model
}

// Name implements rerank.Stage.
func (*SSG) Name() string { return "ssg" }

// Score implements rerank.Stage.
func (s *SSG) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	pool := make([]string, len(cands))
	for i, c := range cands {
		pool[i] = c.FullText()
	}
	scores, err := s.Model.Score(ctx, q.Text, pool)
	if errors.Is(err, ssg.ErrEmptyQuery) {
		return make([]float64, len(cands)), nil
	}
	return scores, err
}
