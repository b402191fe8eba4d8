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

// vectorCodec is the first byte of an encoded candidate vector.
const vectorCodec = 2

// appendVector appends v's encoding: a version byte, its length (uvarint)
// and each value as float64 bits.
func appendVector(b []byte, v []float64) []byte {
	b = append(b, vectorCodec)
	b = binary.AppendUvarint(b, uint64(len(v)))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// decodeVector decodes appendVector's output of a vector of dim values,
// all finite.
func decodeVector(b []byte, dim int) ([]float64, error) {
	if len(b) == 0 || b[0] != vectorCodec {
		return nil, fmt.Errorf("%w: not an encoded vector", ErrBadInput)
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n != uint64(dim) || uint64(len(b)-1-k) != 8*n {
		return nil, fmt.Errorf("%w: a vector of %d values, want %d", ErrBadInput, n, dim)
	}
	b = b[1+k:]
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		if math.IsNaN(v[i]) || math.IsInf(v[i], 0) {
			return nil, fmt.Errorf("%w: value %d not finite", ErrBadInput, i)
		}
	}
	return v, nil
}

// AppendSide appends s's encoding: its vector when it has one, else its
// Input (AppendBinary).
func (m *Model) AppendSide(b []byte, s Side) ([]byte, error) {
	if s.Vec != nil {
		return appendVector(b, s.Vec), nil
	}
	return s.In.AppendBinary(b)
}

// DecodeSide decodes AppendSide's output for m: an Input over m's
// candidate vocabulary, or a vector of the length m's inner-product
// space has.
func (m *Model) DecodeSide(b []byte) (Side, error) {
	if len(b) > 0 && b[0] == vectorCodec {
		ip, ok := m.net.(innerProduct)
		if !ok {
			return Side{}, fmt.Errorf("%w: a vector, but %s scores candidates' words", ErrBadInput, m.Config.Method)
		}
		v, err := decodeVector(b, ip.vectorDim())
		return Side{Vec: v}, err
	}
	in, err := DecodeInput(b, m.VY.Len())
	return Side{In: in}, err
}

// PayloadEncoder stores each document as a model scores it
// (CandidateSide), so scoring reads it instead of analyzing and encoding
// the text at every query.
type PayloadEncoder struct {
	m        *Model
	name, id string
}

// PayloadEncoder returns the encoder of m's candidate sides, stored under
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
	return e.m.AppendSide(nil, e.m.CandidateSide(Candidate{Text: doc.FullText(), Meta: doc.Metadata}))
}
