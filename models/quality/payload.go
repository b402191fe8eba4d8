package quality

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/semrank/semrank/dataset"
)

// PayloadName is the index payload the quality score is stored under.
const PayloadName = "quality"

// Encoder computes a document's quality score at index time, so that
// reranking reads 8 bytes instead of scoring the text: the score does not
// depend on the query. It satisfies index.PayloadEncoder structurally.
// Models with context features have no encoder (see NewEncoder): their
// scores depend on the other candidates.
type Encoder struct {
	m  *Model
	id string
}

// NewEncoder returns the index-time encoder of m, or an error when m uses
// context features or cannot be serialised.
func NewEncoder(m *Model) (*Encoder, error) {
	if len(m.Config.Context) > 0 {
		return nil, errors.New("quality: a model with context features scores a document only among its thread; it has no index payload")
	}
	b, err := m.Bundle()
	if err != nil {
		return nil, err
	}
	return &Encoder{m: m, id: b.ID()}, nil
}

// PayloadName implements index.PayloadEncoder.
func (e *Encoder) PayloadName() string { return PayloadName }

// ModelID implements index.PayloadEncoder: the ID of the model's bundle.
func (e *Encoder) ModelID() string { return e.id }

// EncodePayload implements index.PayloadEncoder.
func (e *Encoder) EncodePayload(doc dataset.Doc) ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, math.Float64bits(e.m.Score(doc.FullText()))), nil
}

// DecodeScore decodes a payload written by Encoder.
func DecodeScore(b []byte) (float64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("quality: payload of %d bytes, want 8", len(b))
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(b))
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("quality: payload is not a finite score")
	}
	return v, nil
}
