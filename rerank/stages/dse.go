package stages

import (
	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/dse"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage(dse.Method, func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		path, err := modelPath(spec, env, dse.Method)
		if err != nil {
			return nil, err
		}
		m, err := rerank.LoadModel(env, path, dse.Read)
		if err != nil {
			return nil, err
		}
		// Option "mix" overrides the TF-IDF mixing weight λ the model chose
		// (the model itself, and so its ID, stays as loaded).
		mix, err := spec.Float("mix", m.Config.Mix)
		if err != nil {
			return nil, err
		}
		score := func(qv, dv []float64, qText, dText string) float64 {
			s := concept.Dot(qv, dv)
			if mix != 0 {
				s += mix * m.TFIDFCosine(qText, dText)
			}
			return s
		}
		return newConcept(spec, env, dse.Method, m, m.Config.C, score)
	})
}
