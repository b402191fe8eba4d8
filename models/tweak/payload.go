package tweak

import (
	"github.com/semrank/semrank/dataset"
)

// PayloadName is the name TWEAK document vectors are stored under in an
// index.
const PayloadName = "tweak"

// Encoder computes documents' learned term-weight vectors at index time.
// It satisfies index.PayloadEncoder.
type Encoder struct {
	m  *Model
	id string
}

// NewEncoder returns the payload encoder of m.
func NewEncoder(m *Model) *Encoder { return &Encoder{m: m, id: m.ID()} }

// PayloadName implements index.PayloadEncoder.
func (e *Encoder) PayloadName() string { return PayloadName }

// ModelID implements index.PayloadEncoder: the model's bundle ID.
func (e *Encoder) ModelID() string { return e.id }

// EncodePayload implements index.PayloadEncoder: the document's vector in
// the compact encoding of Vector.AppendBinary.
func (e *Encoder) EncodePayload(d dataset.Doc) ([]byte, error) {
	return e.m.DocVector(d.Title, d.Text).AppendBinary(nil)
}
