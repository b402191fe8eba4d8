package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/index"
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
			return newDeepMatch(spec.DisplayName(method), m, env.Payloads)
		})
	}
}

// DeepMatch scores each (query, candidate) pair with a matching model of
// package deepmatch — DeepMatch itself or one of its inner-product
// baselines. A candidate's side (deepmatch.Side: its words as the network
// reads them, or the baselines' candidate vector) depends on the candidate
// alone, so an index stores it (under the stage's name) and the stage
// reads it instead of computing it from the text at every query.
type DeepMatch struct {
	name    string
	Model   *deepmatch.Model
	encoder rerank.PayloadEncoder // nil: every candidate encoded from its text
	stored  storedPayload
}

// newDeepMatch returns the stage called name for m. Payloads attached to
// an index semrank did not build hold no metadata, so a model reading
// candidates' metadata (Config.Meta) encodes them from the text there.
func newDeepMatch(name string, m *deepmatch.Model, payloads rerank.Payloads) (*DeepMatch, error) {
	s := &DeepMatch{name: name, Model: m}
	if _, attached := payloads.(*index.SourcePayloads); attached && m.Config.Meta {
		return s, nil
	}
	enc, err := m.PayloadEncoder(name)
	if err != nil {
		return nil, err
	}
	s.encoder = enc
	if s.stored, err = newStoredPayload(payloads, enc); err != nil {
		return nil, err
	}
	return s, nil
}

// Name implements rerank.Stage.
func (s *DeepMatch) Name() string { return s.name }

// ReadsMetadata implements rerank.MetadataReader: the stage reads a
// candidate's metadata when its model adds meta tokens (Config.Meta).
func (s *DeepMatch) ReadsMetadata() bool { return s.Model.Config.Meta }

// PayloadEncoder implements rerank.PayloadStage: each candidate's side as
// the network reads it, or nil where the stage reads none.
func (s *DeepMatch) PayloadEncoder() rerank.PayloadEncoder {
	if s.encoder == nil {
		return nil
	}
	return s.encoder
}

// ReadsDocs implements rerank.DocReader: the text is read where the index
// holds no encoded candidate.
func (s *DeepMatch) ReadsDocs(ctx context.Context, ids []string, reads []bool) error {
	if s.encoder == nil {
		return allRead(reads)
	}
	return s.stored.missingIn(ctx, ids, reads)
}

// WindowPayloads implements rerank.PayloadReader: the encoded
// candidates, where ReadsDocs reads them.
func (s *DeepMatch) WindowPayloads() (rerank.Payloads, []rerank.PayloadKind) {
	if s.encoder == nil {
		return nil, nil
	}
	return s.stored.windowPayloads()
}

// Score implements rerank.Stage.
func (s *DeepMatch) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Sides are decoded each window, not kept (decodedWindow): a
	// window's sides are as large as its term tables, and keeping both
	// in the shared budget pushed the tables out, which cost the lexical
	// stages more than decoding the sides costs this one.
	stored, err := s.stored.window(ctx, cands)
	if err != nil {
		return nil, err
	}
	ys := make([]deepmatch.Side, len(cands))
	for i, c := range cands {
		if b := stored[i]; b != nil {
			if ys[i], err = s.Model.DecodeSide(b); err != nil {
				return nil, fmt.Errorf("document %s: %w", c.ID, err)
			}
			continue
		}
		ys[i] = s.Model.CandidateSide(deepmatch.Candidate{Text: c.FullText(), Meta: metadata(c.Metadata)})
	}
	return s.Model.ScoreAnalyzed(queryTokens(ctx, q.Text), ys), nil
}

// queryTokens returns text's analyzer tokens (analyzers.Tokens), analyzed
// once per window for all the stages asking (rerank.WindowMemo): callers
// must not modify them.
func queryTokens(ctx context.Context, text string) []string {
	type key struct{ text string }
	v, _ := rerank.WindowMemoOf(ctx).Do(key{text}, func() (any, error) { return analyzers.Tokens(text), nil })
	return v.([]string)
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
