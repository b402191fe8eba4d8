package concept

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Cosine returns the cosine of two dense vectors of equal length, 0 when
// either is zero.
func Cosine(a, b []float64) float64 {
	var d, na, nb float64
	for i := range a {
		d += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return d / math.Sqrt(na*nb)
}

// CosineEncoded returns Cosine(a, v), to the last bit, for v the vector
// EncodeVector wrote into b, without decoding v into a slice: a scorer
// reads each candidate's stored vector once. na is a's squared norm
// (SquaredNorm), which a scorer computes once for all candidates.
// Malformed input is the error DecodeVectorTo gives.
func CosineEncoded(a []float64, na float64, b []byte) (float64, error) {
	if len(b) != 4*len(a) {
		return 0, fmt.Errorf("concept: vector payload has %d bytes, want %d (dimension %d)", len(b), 4*len(a), len(a))
	}
	var d, nb float64
	for i := range a {
		x := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("concept: vector payload value %d is not finite", i)
		}
		d += a[i] * x
		nb += x * x
	}
	if na == 0 || nb == 0 {
		return 0, nil
	}
	return d / math.Sqrt(na*nb), nil
}

// CosineStored returns Cosine(a, b), to the last bit, for b a stored
// vector's float32 values (as EncodeVector keeps them), given a's and
// b's squared norms na and nb (SquaredNorm of a, and of b's values as
// float64): a scorer keeping its documents' vectors decoded computes
// each norm once, not once a query.
func CosineStored(a []float64, na float64, b []float32, nb float64) float64 {
	var d float64
	for i := range a {
		d += a[i] * float64(b[i])
	}
	return cosineOfDot(d, na, nb)
}

// CosinesStored sets out[k] to CosineStored(a, na, bs[k], nbs[k]), to the
// last bit, for stored vectors bs as long as a. It takes four dot products
// at once: each is a chain of dependent additions, which one at a time
// leave the processor waiting on each sum, and four independent chains
// overlap, each summed in its own order as CosineStored sums it.
func CosinesStored(a []float64, na float64, bs [][]float32, nbs []float64, out []float64) {
	k := 0
	for ; k+4 <= len(bs); k += 4 {
		b0, b1, b2, b3 := bs[k][:len(a)], bs[k+1][:len(a)], bs[k+2][:len(a)], bs[k+3][:len(a)]
		var d0, d1, d2, d3 float64
		for i, x := range a {
			d0 += x * float64(b0[i])
			d1 += x * float64(b1[i])
			d2 += x * float64(b2[i])
			d3 += x * float64(b3[i])
		}
		out[k] = cosineOfDot(d0, na, nbs[k])
		out[k+1] = cosineOfDot(d1, na, nbs[k+1])
		out[k+2] = cosineOfDot(d2, na, nbs[k+2])
		out[k+3] = cosineOfDot(d3, na, nbs[k+3])
	}
	for ; k < len(bs); k++ {
		out[k] = CosineStored(a, na, bs[k], nbs[k])
	}
}

// cosineOfDot is the cosine of two vectors given their dot product d and
// squared norms na and nb, 0 when either is zero.
func cosineOfDot(d, na, nb float64) float64 {
	if na == 0 || nb == 0 {
		return 0
	}
	return d / math.Sqrt(na*nb)
}

// SquaredNorm returns the sum of a's squares, in Cosine's order.
func SquaredNorm(a []float64) float64 {
	var na float64
	for _, x := range a {
		na += x * x
	}
	return na
}

// Dot returns the inner product of two dense vectors of equal length.
func Dot(a, b []float64) float64 {
	var d float64
	for i := range a {
		d += a[i] * b[i]
	}
	return d
}

// EncodeVector encodes a concept vector as a payload: little-endian float32.
func EncodeVector(v []float64) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(x)))
	}
	return out
}

// DecodeVector decodes a payload written by EncodeVector, checking that it
// holds exactly dim finite values.
func DecodeVector(b []byte, dim int) ([]float64, error) {
	out := make([]float64, dim)
	if err := DecodeVectorTo(out, b); err != nil {
		return nil, err
	}
	return out, nil
}

// DecodeVectorTo decodes a payload written by EncodeVector into dst, whose
// length is the expected dimension, so that a scorer reading many vectors
// reuses one buffer.
func DecodeVectorTo(dst []float64, b []byte) error {
	if len(b) != 4*len(dst) {
		return fmt.Errorf("concept: vector payload has %d bytes, want %d (dimension %d)", len(b), 4*len(dst), len(dst))
	}
	for i := range dst {
		x := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("concept: vector payload value %d is not finite", i)
		}
		dst[i] = x
	}
	return nil
}
