package stages

import (
	"fmt"
	"math"

	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/dse"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage(dse.Method, func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		o := DefaultDSEOptions()
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		m, _, err := stageModel(spec, env, dse.Method, dse.Read)
		if err != nil {
			return nil, err
		}
		// Option "mix" overrides the TF-IDF mixing weight λ the model chose
		// (the model itself, and so its ID, stays as loaded); unlike
		// training's, it cannot be negative.
		mix := m.Config.Mix
		if o.Mix != nil {
			mix = *o.Mix
		}
		if o.Mix != nil && (!(mix >= 0) || math.IsInf(mix, 0)) {
			// Training reads a negative mix as "choose λ"; here it
			// would be a weight.
			return nil, fmt.Errorf("dse: option mix %g: want a finite weight ≥ 0 (leave it out for the model's, %g)", mix, m.Config.Mix)
		}
		score := func(qv, dv []float64, qText, dText string) float64 {
			s := concept.Dot(qv, dv)
			if mix != 0 {
				s += mix * m.TFIDFCosine(qText, dText)
			}
			return s
		}
		c, err := newConcept(spec, env, dse.Method, o.Payload, m, m.Config.C, score)
		if err != nil {
			return nil, err
		}
		c.textScore = mix != 0
		return c, nil
	})
}
