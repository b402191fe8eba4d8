package tweak

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/semrank/semrank/internal/termorder"
)

// codecVersion is the first byte of an encoded vector.
const codecVersion = 1

// maxEncodedTerms bounds the term count a decoder accepts, so a corrupt
// count cannot make it allocate without limit.
const maxEncodedTerms = 1 << 20

// AppendBinary appends the compact encoding of v to b:
//
//	version byte | uvarint n | n × (uvarint shared-prefix length,
//	uvarint suffix length, suffix bytes, float32 weight, little endian)
//
// Terms are front-coded against the previous term (they are sorted, so
// neighbours share prefixes), and weights are stored as float32: a cosine
// computed from a decoded vector differs from the exact one by ~1e-7.
func (v Vector) AppendBinary(b []byte) ([]byte, error) {
	if len(v.Terms) != len(v.Weights) {
		return b, fmt.Errorf("tweak: vector has %d terms and %d weights", len(v.Terms), len(v.Weights))
	}
	b = append(b, codecVersion)
	b = binary.AppendUvarint(b, uint64(len(v.Terms)))
	prev := ""
	for i, t := range v.Terms {
		if i > 0 && t <= prev {
			return b, fmt.Errorf("tweak: vector terms not strictly increasing at %q", t)
		}
		p := commonPrefix(prev, t)
		b = binary.AppendUvarint(b, uint64(p))
		b = binary.AppendUvarint(b, uint64(len(t)-p))
		b = append(b, t[p:]...)
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v.Weights[i])))
		prev = t
	}
	return b, nil
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// ErrBadVector is wrapped by every decoding error.
var ErrBadVector = errors.New("tweak: malformed term-weight vector")

// DecodeVector parses an encoding made by AppendBinary, validating it fully:
// a truncated, padded or unordered encoding is an error, never a panic.
func DecodeVector(b []byte) (Vector, error) {
	var v Vector
	err := scanVector(b, func(n int) {
		v = Vector{Terms: make([]string, 0, n), Weights: make([]float64, 0, n)}
	}, func(term []byte, w float64) {
		v.Terms = append(v.Terms, string(term))
		v.Weights = append(v.Weights, w)
	})
	if err != nil {
		return Vector{}, err
	}
	return v, nil
}

// CosineEncoded returns Cosine(q, d) for d encoded in b (AppendBinary's
// output), to the last bit, without decoding d: a stage scoring a window
// reads each candidate's stored vector once, and only the query's terms
// need matching. Malformed input is the error DecodeVector gives.
func CosineEncoded(q Vector, b []byte) (float64, error) {
	var dot, sq float64
	i := 0
	err := scanVector(b, nil, func(term []byte, w float64) {
		sq += w * w
		for i < len(q.Terms) && termorder.Before(q.Terms[i], term) {
			i++
		}
		if i < len(q.Terms) && q.Terms[i] == string(term) {
			dot += q.Weights[i] * w
		}
	})
	if err != nil {
		return 0, err
	}
	n := q.Norm() * math.Sqrt(sq)
	if n == 0 {
		return 0, nil
	}
	return dot / n, nil
}

// EachWeight checks b, AppendBinary's output, calling size with its
// number of terms and then fn with each term and its weight in term
// order, as DecodeVector decodes them, without building the vector: a
// scorer keeping its own form of a document's vector reads it once. The
// term's bytes are fn's only until it returns. Malformed input is the
// error DecodeVector gives, after calls for the terms before the damage.
func EachWeight(b []byte, size func(n int), fn func(term []byte, w float64)) error {
	return scanVector(b, size, fn)
}

// scanVector checks b, AppendBinary's output, calling size with its
// number of terms and then term with each term and weight in order; the
// term's bytes are reused by the next call.
func scanVector(b []byte, size func(n int), term func(t []byte, w float64)) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadVector, fmt.Sprintf(format, args...))
	}
	if len(b) == 0 {
		return bad("empty")
	}
	if b[0] != codecVersion {
		return bad("version %d, this build reads %d", b[0], codecVersion)
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > maxEncodedTerms || n > uint64(len(b)) {
		return bad("bad term count")
	}
	b = b[k:]
	if size != nil {
		size(int(n))
	}
	var cur []byte
	for i := uint64(0); i < n; i++ {
		p, k := binary.Uvarint(b)
		if k <= 0 || p > uint64(len(cur)) {
			return bad("term %d: bad prefix length", i)
		}
		b = b[k:]
		s, k := binary.Uvarint(b)
		if k <= 0 || s > uint64(len(b)-k) {
			return bad("term %d: bad suffix length", i)
		}
		b = b[k:]
		suffix := b[:s]
		b = b[s:]
		// The term shares cur's first p bytes, so it follows cur when
		// its suffix follows the rest of cur.
		if i > 0 && !termorder.After(suffix, cur[p:]) {
			return bad("term %d (%q) not after %q", i, string(cur[:p])+string(suffix), cur)
		}
		cur = append(cur[:p], suffix...)
		if len(b) < 4 {
			return bad("term %d: truncated weight", i)
		}
		w := float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return bad("term %d: weight %v", i, w)
		}
		b = b[4:]
		term(cur, w)
	}
	if len(b) != 0 {
		return bad("%d trailing bytes", len(b))
	}
	return nil
}
