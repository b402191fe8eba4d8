package stages

import (
	"context"
	"errors"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/ssg"
	"github.com/semrank/semrank/models/topics"
	"github.com/semrank/semrank/models/wmd"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage("ssg", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		var o SSGOptions
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		space, err := loadSpace(spec, env, o.Format)
		if err != nil {
			return nil, err
		}
		tp := o.Topics
		if tp == "" {
			return nil, &rerank.NeedsModelError{Type: "ssg", What: "option topics: a topics model"}
		}
		tm, err := rerank.LoadModel(env, rerank.Resolve(env.Dir, tp), topics.Read)
		if err != nil {
			return nil, err
		}
		g := o.SSGGraphOptions
		m, err := ssg.New(space, tm, ssg.Config{K: g.K, Hops: g.Hops, Seeds: g.Seeds, MaxIter: g.MaxIter,
			Dropout: g.Dropout, MaxDist: g.MaxDist, MuPP: g.MuPP, MuNP: g.MuNP, Tol: g.Tol, Damping: g.Damping, Edges: g.Edges})
		if err != nil {
			return nil, err
		}
		if o.Neighbours != "" {
			n, err := rerank.LoadModel(env, rerank.Resolve(env.Dir, o.Neighbours), ssg.ReadNeighbours)
			if err != nil {
				return nil, err
			}
			if err := m.SetNeighbours(n); err != nil {
				return nil, err
			}
		}
		if coll := o.Collection; coll != "" {
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

// SSGOptions are the options of an ssg stage: its word vectors' format
// (see WMDOptions), its topic model (required, or trained: see
// fitUnsup), a BEIR directory whose texts the graph draws neighbours
// from too (collection), the collection's neighbour lists (neighbours,
// see ssg.Neighbours; semrank train neighbours writes them), the graph's
// settings (ssg.Config; 0 is its default), and its trainer's.
type SSGOptions struct {
	Format          string `yaml:"format"`
	Topics          string `yaml:"topics"`
	Collection      string `yaml:"collection"`
	Neighbours      string `yaml:"neighbours"`
	SSGGraphOptions `yaml:",inline"`
	EmbedOptions    `yaml:",inline"`
	TopicsOptions   `yaml:",inline"`
}

// SSGGraphOptions are ssg.Config's settings under the option names of an
// ssg stage.
type SSGGraphOptions struct {
	K       int     `yaml:"k"`
	Hops    int     `yaml:"hops"`
	Seeds   int     `yaml:"seeds"`
	MaxIter int     `yaml:"max_iter"`
	Dropout float64 `yaml:"dropout"`
	MaxDist float64 `yaml:"max_dist"`
	MuPP    float64 `yaml:"mu_pp"`
	MuNP    float64 `yaml:"mu_np"`
	Tol     float64 `yaml:"tol"`
	Damping float64 `yaml:"damping"`
	Edges   string  `yaml:"edges"`
}

// SSG scores candidates by their label after soft-seeded label
// propagation on the query-induced WMD graph over the candidate list
// (Srivastava & Datt, 2017). Options: topics (required), k, hops, seeds,
// dropout (0: SSG-WD; > 0: SSG-D), max_dist, mu_pp, mu_np, tol, max_iter,
// damping, edges (wcd, the default, or wmd: how the edges between the
// graph's documents are weighed, see ssg.Config.Edges), collection: a
// BEIR directory whose queries and documents the graphs may draw
// neighbours from besides the candidates (the paper's setting), and
// neighbours: the collection's precomputed neighbour lists, which spare
// the graph's 2-hop searches most of their transport problems and change
// none of their results. A query
// with no word that has a vector leaves all candidates tied at 0. When
// the spec names no word vectors (model) or no topic model (option
// topics), rerank.TrainStage trains them from unlabeled
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

// ReadsMetadata implements rerank.MetadataReader: the stage reads text
// alone.
func (*SSG) ReadsMetadata() bool { return false }

// Score implements rerank.Stage.
func (s *SSG) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	pool := make([]string, len(cands))
	for i, c := range cands {
		pool[i] = c.FullText()
	}
	// The query's distances to the window, which a wmd stage over the
	// same vectors computes too.
	qdist, err := windowDistances(ctx, s.Model.Space, q.Text, func() ([]wmd.Doc, error) { return s.Model.Docs(pool), nil })
	if err != nil {
		return nil, err
	}
	if qdist == nil {
		return make([]float64, len(cands)), nil
	}
	scores, err := s.Model.ScoreFrom(ctx, q.Text, pool, rerank.IDs(cands), qdist)
	if errors.Is(err, ssg.ErrEmptyQuery) {
		return make([]float64, len(cands)), nil
	}
	return scores, err
}
