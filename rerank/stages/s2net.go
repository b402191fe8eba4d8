package stages

import (
	"io"

	"github.com/semrank/semrank/models/s2net"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage(s2net.Method, func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		m, _, err := stageModel(spec, env, s2net.Method, func(r io.Reader, name string) (*s2net.Model, error) { return s2net.Read(r, name, nil) })
		if err != nil {
			return nil, err
		}
		return newConcept(spec, env, s2net.Method, m, m.Dim(), cosine)
	})
}
