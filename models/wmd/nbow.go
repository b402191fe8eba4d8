package wmd

import (
	"math"
	"slices"
	"sync"

	"github.com/semrank/semrank/models/embed"
)

// Space turns text into nBOW documents over a vocabulary of word vectors
// and measures distances between them. It is safe for concurrent use.
type Space struct {
	vec     *embed.Vectors
	solvers sync.Pool
}

// NewSpace returns a Space over v.
func NewSpace(v *embed.Vectors) *Space {
	return &Space{vec: v, solvers: sync.Pool{New: func() any { return new(Solver) }}}
}

// Vectors returns the word vectors behind the space.
func (s *Space) Vectors() *embed.Vectors { return s.vec }

// Doc is a normalised bag of words: distinct vocabulary ids in increasing
// order, their relative frequencies (summing to 1), and the centroid
// Σ_i d_i·x_i of their vectors.
type Doc struct {
	Words    []int32
	Weights  []float64
	Centroid []float64
}

// Empty reports whether the document has no word with a vector.
func (d Doc) Empty() bool { return len(d.Words) == 0 }

// Doc builds the nBOW of text (tokenized by embed.Tokenize).
func (s *Space) Doc(text string) Doc { return s.DocFromTokens(embed.Tokenize(text)) }

// DocFromTokens builds the nBOW of already tokenized words; words without
// a vector are dropped.
func (s *Space) DocFromTokens(tokens []string) Doc {
	count := map[int32]float64{}
	var total float64
	for _, t := range tokens {
		if i, ok := s.vec.Index(t); ok {
			count[int32(i)]++
			total++
		}
	}
	d := Doc{Words: make([]int32, 0, len(count))}
	for i := range count {
		d.Words = append(d.Words, i)
	}
	slices.Sort(d.Words)
	d.Weights = make([]float64, len(d.Words))
	d.Centroid = make([]float64, s.vec.Dim)
	for k, i := range d.Words {
		w := count[i] / total
		d.Weights[k] = w
		for j, x := range s.vec.Vector(int(i)) {
			d.Centroid[j] += w * x
		}
	}
	return d
}

func euclid(a, b []float64) float64 {
	var s float64
	for i, x := range a {
		d := x - b[i]
		s += d * d
	}
	return math.Sqrt(s)
}

// WordDistance is the Euclidean distance between the vectors of two
// vocabulary ids (exactly 0 for the same id).
func (s *Space) WordDistance(i, j int32) float64 {
	if i == j {
		return 0
	}
	return euclid(s.vec.Vector(int(i)), s.vec.Vector(int(j)))
}

// Costs returns the |a|×|b| word-distance matrix, reusing buf.
func (s *Space) Costs(a, b Doc, buf []float64) []float64 {
	buf = grow(buf, len(a.Words)*len(b.Words))
	for r, i := range a.Words {
		row := buf[r*len(b.Words):]
		for c, j := range b.Words {
			row[c] = s.WordDistance(i, j)
		}
	}
	return buf
}

// WCD is the Word Centroid Distance ‖Xa − Xb‖, a lower bound of WMD.
func (s *Space) WCD(a, b Doc) float64 {
	if a.Empty() || b.Empty() {
		return math.Inf(1)
	}
	return euclid(a.Centroid, b.Centroid)
}

// RWMD is the Relaxed WMD lower bound: the larger of the two one-sided
// relaxations, each moving every word to its nearest word on the other
// side.
func (s *Space) RWMD(a, b Doc) float64 {
	if a.Empty() || b.Empty() {
		return math.Inf(1)
	}
	return rwmd(a.Weights, b.Weights, s.Costs(a, b, nil))
}

func rwmd(a, b, cost []float64) float64 {
	m := len(b)
	var ra, rb float64
	for i, w := range a {
		lo := math.Inf(1)
		for _, c := range cost[i*m : i*m+m] {
			lo = min(lo, c)
		}
		ra += w * lo
	}
	for j, w := range b {
		lo := math.Inf(1)
		for i := range a {
			lo = min(lo, cost[i*m+j])
		}
		rb += w * lo
	}
	return max(ra, rb)
}

// WMD is the exact Word Mover's Distance; +Inf when either document is
// empty.
func (s *Space) WMD(a, b Doc) (float64, error) {
	if a.Empty() || b.Empty() {
		return math.Inf(1), nil
	}
	return s.solve(a, b, s.Costs(a, b, nil))
}

func (s *Space) solve(a, b Doc, cost []float64) (float64, error) {
	sol := s.solvers.Get().(*Solver)
	defer s.solvers.Put(sol)
	return sol.Solve(a.Weights, b.Weights, cost)
}
