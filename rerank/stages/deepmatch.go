package stages

import (
	"context"
	"encoding/json"
	"io"

	"github.com/semrank/semrank/models/deepmatch"
	"github.com/semrank/semrank/rerank"
)

func init() {
	for _, method := range []string{deepmatch.MethodDeepMatch, deepmatch.MethodBilinear, deepmatch.MethodSiamese} {
		rerank.RegisterStage(method, func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
			if err := spec.DecodeOptions(matchOptionsFor(method)); err != nil { // its trainer's: the stage reads none
				return nil, err
			}
			m, _, err := stageModel(spec, env, method, func(r io.Reader, name string) (*deepmatch.Model, error) { return deepmatch.Read(r, name, method) })
			if err != nil {
				return nil, err
			}
			name := spec.Name
			if name == "" {
				name = method
			}
			return &DeepMatch{name: name, Model: m}, nil
		})
	}
}

// DeepMatch scores each (query, candidate) pair with a matching model of
// package deepmatch — DeepMatch itself or one of its inner-product
// baselines — computed at rerank time from the texts' tokens; it needs no
// index payload.
type DeepMatch struct {
	name  string
	Model *deepmatch.Model
}

// Name implements rerank.Stage.
func (s *DeepMatch) Name() string { return s.name }

// Score implements rerank.Stage.
func (s *DeepMatch) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cs := make([]deepmatch.Candidate, len(cands))
	for i, c := range cands {
		cs[i] = deepmatch.Candidate{Text: c.FullText(), Meta: metadata(c.Metadata)}
	}
	return s.Model.Score(q.Text, cs), nil
}

// metadata returns a candidate's document metadata: the pipeline hands it
// over decoded, a wrapped index's hit as the stored "meta" JSON field.
func metadata(fields map[string]any) map[string]any {
	raw, ok := fields["meta"].(string)
	if !ok {
		return fields
	}
	var m map[string]any
	if json.Unmarshal([]byte(raw), &m) != nil {
		return fields
	}
	return m
}
