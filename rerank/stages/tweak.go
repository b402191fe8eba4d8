package stages

import (
	"context"
	"fmt"

	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage(tweak.Method, func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		m, _, err := stageModel(spec, env, tweak.Method, tweak.Read)
		if err != nil {
			return nil, err
		}
		enc, err := payloadOption(spec, tweak.NewEncoder(m))
		if err != nil {
			return nil, err
		}
		return newTWEAK(spec.Name, m, enc, env.Payloads)
	})
}

// TWEAK scores candidates by the cosine of the query's and the candidate's
// learned term-weight vectors (models/tweak). A candidate's vector is read
// from the index's "tweak" payload (option "payload" names another),
// computed at index time, when the index has one, and computed from the candidate's title and text otherwise (no
// index, a candidate file, or a document indexed without the model); both
// give the same weights, since the model carries its own document
// frequencies.
type TWEAK struct {
	name    string
	model   *tweak.Model
	encoder rerank.PayloadEncoder
	stored  storedPayload
}

// NewTWEAK returns the stage for m. When payloads holds TWEAK vectors
// written by another model, it refuses, naming both models.
func NewTWEAK(name string, m *tweak.Model, payloads rerank.Payloads) (*TWEAK, error) {
	return newTWEAK(name, m, tweak.NewEncoder(m), payloads)
}

func newTWEAK(name string, m *tweak.Model, enc rerank.PayloadEncoder, payloads rerank.Payloads) (*TWEAK, error) {
	if name == "" {
		name = tweak.Method
	}
	s := &TWEAK{name: name, model: m, encoder: enc}
	var err error
	if s.stored, err = newStoredPayload(payloads, enc); err != nil {
		return nil, err
	}
	return s, nil
}

// Name implements rerank.Stage.
func (s *TWEAK) Name() string { return s.name }

// PayloadEncoder implements rerank.PayloadStage.
func (s *TWEAK) PayloadEncoder() rerank.PayloadEncoder { return s.encoder }

// QueryWeights implements rerank.QueryWeighter: the learned query term
// weights, for boosting first-stage terms.
func (s *TWEAK) QueryWeights(text string) map[string]float64 { return s.model.QueryWeights(text) }

// ReadsDoc implements rerank.DocReader: the text is read where the index
// holds no document vector.
func (s *TWEAK) ReadsDoc(id string) bool { return s.stored.missing(id) }

// Score implements rerank.Stage.
func (s *TWEAK) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	qv := s.model.QueryVector(q.Text)
	out := make([]float64, len(cands))
	for i, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, ok, err := s.stored.get(c.ID)
		if err != nil {
			return nil, err
		}
		if ok {
			// The stored vector, read without decoding it.
			if out[i], err = tweak.CosineEncoded(qv, b); err != nil {
				return nil, fmt.Errorf("document %s: %w", c.ID, err)
			}
			continue
		}
		out[i] = tweak.Cosine(qv, s.model.DocVector(c.Title, c.Text))
	}
	return out, nil
}

func (s *TWEAK) docVector(c rerank.Candidate) (tweak.Vector, error) {
	b, ok, err := s.stored.get(c.ID)
	if err != nil {
		return tweak.Vector{}, err
	}
	if ok {
		v, err := tweak.DecodeVector(b)
		if err != nil {
			return tweak.Vector{}, fmt.Errorf("document %s: %w", c.ID, err)
		}
		return v, nil
	}
	return s.model.DocVector(c.Title, c.Text), nil
}
