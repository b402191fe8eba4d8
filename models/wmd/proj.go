package wmd

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Projection bound. Exact k-NN spends much of its time computing word
// distances in full dimension for documents that a lower bound then rules
// out: the dual bound needs every distance of a document's cost matrix.
// An orthonormal projection P shortens every distance, ‖P(x−y)‖ ≤ ‖x−y‖,
// so any dual bound computed on the projected distances is a lower bound
// of WMD too (a dual solution feasible for smaller costs is feasible for
// the larger ones). KNN bounds each document first on distances in a few
// dimensions (cheap: a sixth of the arithmetic at 16 of 100) and computes
// the full distances only for the documents that bound lets through.
//
// P spans the top principal directions of the index's vocabulary, where
// the vectors vary most, so the projected distances lose little: on the
// SemEval word vectors 16 of 100 directions keep 99% of the variance, and
// the projected bound lets through about a fifth of the documents WCD
// lets through, with less than half the words.
//
// Rounding: the projected coordinates, the basis's orthonormality and the
// full distances are each off by a few ulps, so a projected distance may
// exceed the cost matrix's entry by a hair. The bound is lowered by
// margin (see projection.slack), far above those errors; a dual bound
// for costs that exceed c by at most δ everywhere exceeds c's by at most
// δ, both histograms having unit mass.

// projDims is the number of principal directions; the projection is used
// only for vectors of at least projMinDim dimensions, where it saves more
// than it costs. Tests lower both.
var projDims, projMinDim = 16, 64

// projection is an index's projected vocabulary. A word x becomes p+1
// coordinates: Px, and ‖Rx‖ where R = I − PᵀP is the projection on the
// remaining directions. The distance between two such points,
// √(‖P(x−y)‖² + (‖Rx‖ − ‖Ry‖)²), is still at most ‖x−y‖, since ‖x−y‖² =
// ‖P(x−y)‖² + ‖R(x−y)‖² and ‖R(x−y)‖ ≥ |‖Rx‖ − ‖Ry‖|, and it is tighter
// than ‖P(x−y)‖ alone where the words differ in length off the top
// directions; the distance kernel computes it as it is, one dimension
// more.
type projection struct {
	p, dim int
	width  int       // p+1 coordinates per word
	basis  []float64 // p × dim, orthonormal rows
	vecs   []float64 // vecs[w·width : w·width+width]: local word w projected
	norm   float64   // max ‖x‖ over the index's vocabulary
}

// project builds x.proj, or leaves it nil where the vectors are too short
// or the vocabulary too small to bother.
func (x *Index) project() {
	x.once.Do(x.vocabulary)
	vec := x.space.vec
	dim, p := vec.Dim, projDims
	if dim < projMinDim || p <= 0 || p > dim || len(x.words) < 2*p {
		return
	}
	// Covariance of up to 1,024 vocabulary words, evenly spaced: enough to
	// find the directions of large variance; any orthonormal basis would
	// give a valid bound, only a looser one.
	step := max(1, len(x.words)/1024)
	mean := make([]float64, dim)
	var count float64
	for w := 0; w < len(x.words); w += step {
		for i, v := range vec.Vector(int(x.words[w])) {
			mean[i] += v
		}
		count++
	}
	for i := range mean {
		mean[i] /= count
	}
	cov := make([]float64, dim*dim)
	d := make([]float64, dim)
	for w := 0; w < len(x.words); w += step {
		for i, v := range vec.Vector(int(x.words[w])) {
			d[i] = v - mean[i]
		}
		for i, di := range d {
			row := cov[i*dim : i*dim+dim]
			for j := i; j < dim; j++ {
				row[j] += di * d[j]
			}
		}
	}
	for i := 0; i < dim; i++ {
		for j := 0; j < i; j++ {
			cov[i*dim+j] = cov[j*dim+i]
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(dim, cov), true) {
		return
	}
	var ev mat.Dense
	eig.VectorsTo(&ev)
	pr := &projection{p: p, dim: dim, basis: make([]float64, p*dim)}
	for k := 0; k < p; k++ { // eigenvalues ascend: the last p columns
		for i := 0; i < dim; i++ {
			pr.basis[k*dim+i] = ev.At(i, dim-1-k)
		}
	}
	pr.orthonormalize()
	pr.width = p + 1
	pr.vecs = make([]float64, len(x.words)*pr.width)
	r := make([]float64, dim)
	for w, id := range x.words {
		v := vec.Vector(int(id))
		pr.apply(v, pr.vecs[w*pr.width:w*pr.width+pr.width], r)
		pr.norm = max(pr.norm, math.Sqrt(dot(v, v)))
	}
	x.proj = pr
}

// orthonormalize runs modified Gram–Schmidt twice over the basis, so that
// its rows are orthonormal to within rounding whatever the eigensolver
// returned.
func (pr *projection) orthonormalize() {
	dim := pr.dim
	for range 2 {
		for k := 0; k < pr.p; k++ {
			bk := pr.basis[k*dim : k*dim+dim]
			for l := 0; l < k; l++ {
				bl := pr.basis[l*dim : l*dim+dim]
				c := dot(bk, bl)
				for i := range bk {
					bk[i] -= c * bl[i]
				}
			}
			n := math.Sqrt(dot(bk, bk))
			for i := range bk {
				bk[i] /= n
			}
		}
	}
}

// apply sets out (width values) to P·v and ‖R·v‖, the residual R·v
// formed explicitly (v − Pᵀ·P·v, in r) rather than from ‖v‖² − ‖P·v‖²,
// which would lose half the digits to cancellation when the residual is
// small. Query words and the vocabulary go through this one function, so
// a word projects to the same coordinates bit for bit wherever it comes
// from.
func (pr *projection) apply(v, out, r []float64) {
	v, r = v[:pr.dim], r[:pr.dim]
	copy(r, v)
	for k := range out[:pr.p] {
		b := pr.basis[k*pr.dim : k*pr.dim+pr.dim]
		out[k] = dot(v, b)
		for i, x := range b {
			r[i] -= out[k] * x
		}
	}
	out[pr.p] = math.Sqrt(dot(r, r))
}

// slack returns the margin a projected bound is lowered by, for query
// words of norm at most qn: 8·(p + 2·dim + 8)·dim·ε·(‖x‖max + qn). Each
// projected coordinate is a dot product of dim terms (error ≤ dim·ε·‖v‖),
// the residual's norm is off by about p·dim·ε·‖v‖ (p subtractions of a
// rounded coordinate times the basis), the basis is orthonormal to within
// about dim·ε, and the full distance the cost matrix holds is itself off
// by up to dim·ε relative; each term is below (p + 2·dim)·dim·ε·(‖x‖ +
// ‖y‖), and the factor 8 and the 8 cover the sums and square roots. For
// 100 dimensions and unit norms that is about 4·10⁻¹¹.
func (pr *projection) slack(qn float64) float64 {
	const eps = 0x1p-52
	return 8 * float64(pr.p+2*pr.dim+8) * float64(pr.dim) * eps * (pr.norm + qn)
}

func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// Prepare builds what searches of the index share (its vocabulary, the
// documents' centroids and, for long vectors, the projected vocabulary)
// now rather than in the first search that needs them; it is safe to call
// more than once and concurrently with searches. Timings of searches that
// should not include this one-time work call it first.
func (x *Index) Prepare() {
	x.once.Do(x.vocabulary)
	x.projOnce.Do(x.project)
}
