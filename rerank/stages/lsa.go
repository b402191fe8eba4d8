package stages

import (
	"github.com/semrank/semrank/models/lsa"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage(lsa.Method, func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		o := DefaultLSAOptions()
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		m, _, err := stageModel(spec, env, lsa.Method, lsa.Read)
		if err != nil {
			return nil, err
		}
		return newConcept(spec, env, lsa.Method, o.Payload, m, m.Dim(), nil)
	})
}
