package tweak

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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
	bad := func(format string, args ...any) (Vector, error) {
		return Vector{}, fmt.Errorf("%w: %s", ErrBadVector, fmt.Sprintf(format, args...))
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
	v := Vector{Terms: make([]string, 0, n), Weights: make([]float64, 0, n)}
	prev := ""
	for i := uint64(0); i < n; i++ {
		p, k := binary.Uvarint(b)
		if k <= 0 || p > uint64(len(prev)) {
			return bad("term %d: bad prefix length", i)
		}
		b = b[k:]
		s, k := binary.Uvarint(b)
		if k <= 0 || s > uint64(len(b)-k) {
			return bad("term %d: bad suffix length", i)
		}
		b = b[k:]
		t := prev[:p] + string(b[:s])
		b = b[s:]
		if i > 0 && t <= prev {
			return bad("term %d (%q) not after %q", i, t, prev)
		}
		if len(b) < 4 {
			return bad("term %d: truncated weight", i)
		}
		w := float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return bad("term %d: weight %v", i, w)
		}
		b = b[4:]
		v.Terms = append(v.Terms, t)
		v.Weights = append(v.Weights, w)
		prev = t
	}
	if len(b) != 0 {
		return bad("%d trailing bytes", len(b))
	}
	return v, nil
}
