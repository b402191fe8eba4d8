package deepmatch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/semrank/semrank/dataset"
)

// inputCodec is the first byte of an encoded Input.
const inputCodec = 1

// AppendBinary appends in's encoding: a version byte, the number of words,
// each word id as the difference from the previous one (uvarint), then
// each value as float64 bits, so a decoded Input scores to the bit as the
// one encoded.
func (in Input) AppendBinary(b []byte) ([]byte, error) {
	if len(in.Idx) != len(in.Val) {
		return b, fmt.Errorf("deepmatch: input of %d ids and %d values", len(in.Idx), len(in.Val))
	}
	b = append(b, inputCodec)
	b = binary.AppendUvarint(b, uint64(len(in.Idx)))
	prev := uint32(0)
	for i, id := range in.Idx {
		if i > 0 && id <= prev {
			return b, errors.New("deepmatch: input ids not ascending")
		}
		b = binary.AppendUvarint(b, uint64(id-prev))
		prev = id
	}
	for _, v := range in.Val {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b, nil
}

// ErrBadInput is wrapped by DecodeInput's errors.
var ErrBadInput = errors.New("deepmatch: malformed encoded input")

// DecodeInput decodes AppendBinary's output for a vocabulary of vocab
// words: ids ascend and are below vocab, values are finite.
func DecodeInput(b []byte, vocab int) (Input, error) {
	bad := func(format string, args ...any) (Input, error) {
		return Input{}, fmt.Errorf("%w: %s", ErrBadInput, fmt.Sprintf(format, args...))
	}
	if len(b) == 0 || b[0] != inputCodec {
		return bad("not an encoded input")
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b))/9 {
		return bad("bad word count")
	}
	b = b[k:]
	in := Input{Idx: make([]uint32, n), Val: make([]float64, n)}
	id := uint64(0)
	for i := range in.Idx {
		d, k := binary.Uvarint(b)
		if k <= 0 || (i > 0 && d == 0) || id+d >= uint64(vocab) {
			return bad("word %d: id out of range or not ascending", i)
		}
		id += d
		in.Idx[i] = uint32(id)
		b = b[k:]
	}
	if uint64(len(b)) != 8*n {
		return bad("%d bytes of values for %d words", len(b), n)
	}
	for i := range in.Val {
		v := math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return bad("word %d: value not finite", i)
		}
		in.Val[i] = v
	}
	return in, nil
}

// PayloadEncoder stores each document as a model's network reads it
// (EncodeCandidate), so scoring reads it instead of analyzing and encoding
// the text at every query.
type PayloadEncoder struct {
	m        *Model
	name, id string
}

// PayloadEncoder returns the encoder of m's candidate inputs, stored under
// name; its model ID is m's bundle's.
func (m *Model) PayloadEncoder(name string) (*PayloadEncoder, error) {
	b, err := m.Bundle()
	if err != nil {
		return nil, err
	}
	return &PayloadEncoder{m: m, name: name, id: b.ID()}, nil
}

// PayloadName implements index.PayloadEncoder.
func (e *PayloadEncoder) PayloadName() string { return e.name }

// ModelID implements index.PayloadEncoder.
func (e *PayloadEncoder) ModelID() string { return e.id }

// EncodePayload implements index.PayloadEncoder.
func (e *PayloadEncoder) EncodePayload(doc dataset.Doc) ([]byte, error) {
	return e.m.EncodeCandidate(Candidate{Text: doc.FullText(), Meta: doc.Metadata}).AppendBinary(nil)
}

// DecodePayload decodes a payload e's model wrote.
func (m *Model) DecodePayload(b []byte) (Input, error) { return DecodeInput(b, m.VY.Len()) }
