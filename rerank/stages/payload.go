package stages

import (
	"context"
	"fmt"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// storedPayload reads the per-document payload a stage's model writes at
// index time. Whether the index holds that model's payload is checked at
// each read, not once when the stage is built: the index may gain it
// afterwards (offline.Open indexes a corpus with the encoders of the
// pipeline it has just built; a server started on an empty index stores
// payloads as documents arrive), and a stage that decided at build time
// would go on computing from text what the index already holds.
type storedPayload struct {
	payloads    rerank.Payloads // nil: compute from text
	name, model string
}

// newStoredPayload returns the reader of enc's payload in p (which may be
// nil). An index whose payload another model wrote is an error naming
// both models and how to mend it: scores from another model's payloads
// would be silently wrong. Payloads attached to an index semrank did not
// build (index.SourcePayloads) are not: the stage computes from text what
// they lack, reads are checked against its model, and semrank attach,
// which builds the stage to compute its payloads, replaces them.
func newStoredPayload(p rerank.Payloads, enc rerank.PayloadEncoder) (storedPayload, error) {
	s := storedPayload{payloads: p, name: enc.PayloadName(), model: enc.ModelID()}
	if _, attached := p.(*index.SourcePayloads); p != nil && !attached {
		if stored := p.PayloadModel(s.name); stored != "" && stored != s.model {
			return s, fmt.Errorf("index payload %q was written by model %s, but the stage loads %s; an index holds one model's payloads: index the corpus into a new path with this model, or point the stage at the index's model", s.name, stored, s.model)
		}
	}
	return s, nil
}

// window returns every candidate's payload, nil where the index holds
// none written by this model; the stages scoring one window share one
// read (rerank.ReadWindowPayloads), so callers must not modify it.
func (s storedPayload) window(ctx context.Context, cands []rerank.Candidate) ([][]byte, error) {
	return rerank.ReadWindowPayloads(ctx, s.payloads, s.name, s.model, rerank.IDs(cands))
}

// windowPayloads returns where s reads and which payload, for a stage's
// rerank.PayloadReader; nil where it computes from text.
func (s storedPayload) windowPayloads() (rerank.Payloads, []rerank.PayloadKind) {
	if s.payloads == nil {
		return nil, nil
	}
	return s.payloads, []rerank.PayloadKind{{Name: s.name, Model: s.model}}
}

// missingIn sets reads[i] where ids[i] has no payload of this model: its
// value is then computed from the document's text (rerank.DocReader).
func (s storedPayload) missingIn(ctx context.Context, ids []string, reads []bool) error {
	stored, err := rerank.ReadWindowPayloads(ctx, s.payloads, s.name, s.model, ids)
	return markMissing(stored, err, reads)
}

// markMissing sets reads[i] where stored[i], a window's payload, is nil,
// or returns err, the error reading them.
func markMissing(stored [][]byte, err error, reads []bool) error {
	if err != nil {
		return err
	}
	for i, b := range stored {
		reads[i] = reads[i] || b == nil
	}
	return nil
}

// namedPayload stores an encoder's payload under another name, the stage
// option "payload": two stages of one type with different models (TWEAK
// trained with two losses, two quality models) then keep their payloads
// apart in one index, which holds one model's payload per name.
type namedPayload struct {
	rerank.PayloadEncoder
	name string
}

// PayloadName implements rerank.PayloadEncoder.
func (e namedPayload) PayloadName() string { return e.name }

// payloadNamed returns enc stored under name (a stage's option "payload"),
// under enc's own name when name is empty.
func payloadNamed(name string, enc rerank.PayloadEncoder) rerank.PayloadEncoder {
	if name == "" || name == enc.PayloadName() {
		return enc
	}
	return namedPayload{enc, name}
}
