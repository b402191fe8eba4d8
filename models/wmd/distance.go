package wmd

import "github.com/semrank/semrank/models/embed"

// lanes computes the distances from any vector to a fixed list of
// vectors (a document's words, a query's, an index's centroids): by the
// FMA or AVX kernel where the processor has it, over the list transposed,
// else four at a time with dist4. The AVX kernel and dist4 give euclid's
// result bit for bit; the FMA kernel differs from it in the last bits.
type lanes struct {
	vs    [][]float64
	dim   int
	width int       // len(vs) rounded up to a multiple of 4
	qt    []float64 // AVX: the vectors transposed, dim × width, zero-padded
	out   []float64 // width
	buf   [][]float64
}

// setWords sets the list to the vectors of words.
func (l *lanes) setWords(v *embed.Vectors, words []int32) {
	l.buf = l.buf[:0]
	for _, w := range words {
		l.buf = append(l.buf, v.Vector(int(w)))
	}
	l.set(l.buf, v.Dim)
}

func (l *lanes) set(vs [][]float64, dim int) {
	l.vs, l.dim = vs, dim
	l.width = (len(vs) + 3) &^ 3
	l.out = grow(l.out, l.width)
	if !hasAVX || dim == 0 {
		return
	}
	l.qt = grow(l.qt, dim*l.width)
	w := l.width
	for k, v := range vs {
		for i, x := range v[:dim] {
			l.qt[i*w+k] = x
		}
	}
	for k := len(vs); k < w; k++ {
		for i := 0; i < dim; i++ {
			l.qt[i*w+k] = 0
		}
	}
}

// from returns the distances from y to every vector of the list (valid
// until the next call).
func (l *lanes) from(y []float64) []float64 { return l.fromNext(y, nil) }

// fromNext is from, prefetching next (a vector to be passed next, or nil)
// where it can.
func (l *lanes) fromNext(y, next []float64) []float64 { return l.into(l.out, y, next) }

// into is fromNext writing to buf (grown as needed and returned): safe
// for concurrent use once set.
func (l *lanes) into(buf, y, next []float64) []float64 {
	n := len(l.vs)
	buf = grow(buf, l.width)
	out := buf[:n]
	if n == 0 {
		return out
	}
	y = y[:l.dim]
	if hasAVX && l.dim > 0 {
		var pf *float64
		if len(next) >= l.dim {
			pf = &next[0]
		}
		if hasFMA {
			distLanesFMA(&y[0], l.dim, &l.qt[0], l.width, &buf[0], pf)
		} else {
			distLanesAVX(&y[0], l.dim, &l.qt[0], l.width, &buf[0], pf)
		}
		return out
	}
	var o [4]float64
	k := 0
	for ; k+4 <= n; k += 4 {
		dist4(y, l.vs[k], l.vs[k+1], l.vs[k+2], l.vs[k+3], &o)
		copy(out[k:k+4], o[:])
	}
	for ; k < n; k++ {
		out[k] = euclid(y, l.vs[k])
	}
	return out
}
