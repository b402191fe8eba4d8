package stages

import (
	"io"

	"github.com/semrank/semrank/models/s2net"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage(s2net.Method, func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		o := DefaultS2NetOptions()
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		m, _, err := stageModel(spec, env, s2net.Method, func(r io.Reader, name string) (*s2net.Model, error) { return s2net.Read(r, name, nil) })
		if err != nil {
			return nil, err
		}
		return newConcept(spec, env, s2net.Method, o.Payload, m, m.Dim(), nil)
	})
}
