package stages

import (
	"github.com/semrank/semrank/models/lsa"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage(lsa.Method, func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		m, _, err := stageModel(spec, env, lsa.Method, lsa.Read)
		if err != nil {
			return nil, err
		}
		return newConcept(spec, env, lsa.Method, m, m.Dim(), cosine)
	})
}
