package wmd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/embed"
)

// PayloadName is the name a document's nBOW is stored under in an index
// (see Encoder).
const PayloadName = "nbow"

// Encoder computes documents' nBOWs in a Space at index time, as index
// payloads: each distinct word with a vector and how often it occurs in
// the document's title and text, so that a search builds the nBOW
// (DecodeDoc) without the document's stored text or its tokenization.
// Its model is the space's vectors: payloads written in other vectors
// name other words.
type Encoder struct {
	Space *Space
}

// PayloadName implements index.PayloadEncoder.
func (Encoder) PayloadName() string { return PayloadName }

// ModelID implements index.PayloadEncoder: the space's fingerprint.
func (e Encoder) ModelID() string { return "wmd-" + e.Space.Fingerprint() }

// EncodePayload implements index.PayloadEncoder.
func (e Encoder) EncodePayload(doc dataset.Doc) ([]byte, error) {
	words, counts := e.Space.Counts(embed.Tokenize(doc.FullText()))
	return AppendCounts(nil, words, counts), nil
}

// AppendCounts appends the payload of words (increasing vocabulary ids)
// and their counts to dst: the number of words, then each word's id less
// the previous one's (the first's plus one) and its count, as unsigned
// varints.
func AppendCounts(dst []byte, words []int32, counts []uint32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(words)))
	prev := int64(-1)
	for k, w := range words {
		dst = binary.AppendUvarint(dst, uint64(int64(w)-prev))
		dst = binary.AppendUvarint(dst, uint64(counts[k]))
		prev = int64(w)
	}
	return dst
}

// DecodeDoc returns the nBOW whose payload is b (see Encoder), bit for bit
// the Doc that the document's text gives. A payload that is malformed or
// names words outside the space is an error.
func (s *Space) DecodeDoc(b []byte) (Doc, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return Doc{}, errors.New("wmd: nBOW payload: bad word count")
	}
	b = b[k:]
	if n > uint64(len(b)/2) { // a word takes two bytes at least
		return Doc{}, fmt.Errorf("wmd: nBOW payload: %d words in %d bytes", n, len(b))
	}
	words, counts := make([]int32, n), make([]uint32, n)
	prev := int64(-1)
	for i := range words {
		d, k := binary.Uvarint(b)
		if k <= 0 || d == 0 || d > math.MaxInt32 {
			return Doc{}, fmt.Errorf("wmd: nBOW payload: bad id step at word %d", i)
		}
		b = b[k:]
		c, k := binary.Uvarint(b)
		if k <= 0 || c > math.MaxUint32 {
			return Doc{}, fmt.Errorf("wmd: nBOW payload: bad count at word %d", i)
		}
		b = b[k:]
		id := prev + int64(d)
		if id > math.MaxInt32 {
			return Doc{}, fmt.Errorf("wmd: nBOW payload: word id %d out of range", id)
		}
		words[i], counts[i], prev = int32(id), uint32(c), id
	}
	if len(b) > 0 {
		return Doc{}, fmt.Errorf("wmd: nBOW payload: %d bytes after the last word", len(b))
	}
	if err := s.checkCounts(words, counts); err != nil {
		return Doc{}, fmt.Errorf("wmd: nBOW payload: %w", err)
	}
	return s.docFromCounts(words, counts), nil
}
