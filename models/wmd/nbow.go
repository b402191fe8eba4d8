package wmd

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/semrank/semrank/models/embed"
)

// Space turns text into nBOW documents over a vocabulary of word vectors
// and measures distances between them. It is safe for concurrent use.
type Space struct {
	vec     *embed.Vectors
	solvers sync.Pool // *Solver
	lanes   sync.Pool // *lanes

	printOnce sync.Once
	print     string // see Fingerprint
}

// NewSpace returns a Space over v.
func NewSpace(v *embed.Vectors) *Space {
	return &Space{vec: v,
		solvers: sync.Pool{New: func() any { return new(Solver) }},
		lanes:   sync.Pool{New: func() any { return new(lanes) }},
	}
}

// Vectors returns the word vectors behind the space.
func (s *Space) Vectors() *embed.Vectors { return s.vec }

// Fingerprint returns a hash of the space's words and vectors, computed
// once: what is computed in one space (word ids, distances) is refused in
// another under it.
func (s *Space) Fingerprint() string {
	s.printOnce.Do(func() {
		h := fnv.New128a()
		var b [8]byte
		for i, w := range s.vec.Words {
			h.Write([]byte(strconv.Itoa(len(w))))
			h.Write([]byte(w))
			for _, x := range s.vec.Vector(i) {
				binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
				h.Write(b[:])
			}
		}
		s.print = fmt.Sprintf("%x", h.Sum(nil))[:16]
	})
	return s.print
}

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
	words, counts := s.Counts(tokens)
	return s.docFromCounts(words, counts)
}

// Counts returns the distinct vocabulary ids of tokens that have a vector,
// in increasing order, and how many times each occurs: what DocFromCounts
// builds the nBOW from.
func (s *Space) Counts(tokens []string) (words []int32, counts []uint32) {
	count := map[int32]uint32{}
	for _, t := range tokens {
		if i, ok := s.vec.Index(t); ok {
			count[int32(i)]++
		}
	}
	words = make([]int32, 0, len(count))
	for i := range count {
		words = append(words, i)
	}
	slices.Sort(words)
	counts = make([]uint32, len(words))
	for k, i := range words {
		counts[k] = count[i]
	}
	return words, counts
}

// DocFromCounts builds the nBOW of words, distinct vocabulary ids in
// increasing order, each occurring counts[k] ≥ 1 times: bit for bit the
// Doc that DocFromTokens builds from tokens with those counts. It refuses
// ids out of order or outside the vocabulary, zero counts, and totals
// that float64 cannot count exactly.
func (s *Space) DocFromCounts(words []int32, counts []uint32) (Doc, error) {
	if err := s.checkCounts(words, counts); err != nil {
		return Doc{}, fmt.Errorf("wmd: %w", err)
	}
	return s.docFromCounts(slices.Clone(words), counts), nil
}

// checkCounts returns DocFromCounts' error for words and counts, if any.
func (s *Space) checkCounts(words []int32, counts []uint32) error {
	if len(words) != len(counts) {
		return fmt.Errorf("%d words but %d counts", len(words), len(counts))
	}
	var total uint64
	for k, w := range words {
		switch {
		case w < 0 || int(w) >= s.vec.Len():
			return fmt.Errorf("word id %d outside the vocabulary of %d words", w, s.vec.Len())
		case k > 0 && w <= words[k-1]:
			return fmt.Errorf("word ids out of order (%d after %d)", w, words[k-1])
		case counts[k] == 0:
			return fmt.Errorf("word id %d counted 0 times", w)
		}
		total += uint64(counts[k])
	}
	if total > 1<<53 {
		return fmt.Errorf("%d words, more than float64 counts exactly", total)
	}
	return nil
}

// docFromCounts is DocFromCounts of valid counts.
func (s *Space) docFromCounts(words []int32, counts []uint32) Doc {
	var total float64
	for _, c := range counts {
		total += float64(c)
	}
	d := Doc{Words: slices.Clip(words), Weights: make([]float64, len(words)), Centroid: make([]float64, s.vec.Dim)}
	for k, i := range words {
		w := float64(counts[k]) / total
		d.Weights[k] = w
		for j, x := range s.vec.Vector(int(i)) {
			d.Centroid[j] += w * x
		}
	}
	return d
}

func euclid(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for i, x := range a {
		d := x - b[i]
		s += d * d
	}
	return math.Sqrt(s)
}

// dist4 sets out[k] to the Euclidean distance between x and yk. Each sum
// runs in the same order as euclid's, so the results are bit for bit
// euclid's; four at a time they run about three times faster (four
// independent dependency chains, x loaded once).
func dist4(x, y0, y1, y2, y3 []float64, out *[4]float64) {
	y0, y1, y2, y3 = y0[:len(x)], y1[:len(x)], y2[:len(x)], y3[:len(x)]
	var s0, s1, s2, s3 float64
	for i, v := range x {
		d0 := v - y0[i]
		d1 := v - y1[i]
		d2 := v - y2[i]
		d3 := v - y3[i]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	out[0], out[1], out[2], out[3] = math.Sqrt(s0), math.Sqrt(s1), math.Sqrt(s2), math.Sqrt(s3)
}

// WordDistance is the Euclidean distance between the vectors of two
// vocabulary ids (exactly 0 for the same id), bit for bit the entry Costs
// has for them.
func (s *Space) WordDistance(i, j int32) float64 {
	if i == j {
		return 0
	}
	return dist(s.vec.Vector(int(i)), s.vec.Vector(int(j)))
}

// dist is the Euclidean distance as the kernels of lanes compute it.
func dist(a, b []float64) float64 {
	if hasFMA {
		return fmaDist(a, b)
	}
	return euclid(a, b)
}

// fmaDist is the FMA kernel's distance (distLanesFMA) for one pair: fused
// multiply-adds into two partial sums, even and odd dims.
func fmaDist(a, b []float64) float64 {
	b = b[:len(a)]
	var se, so float64
	i := 0
	for ; i+1 < len(a); i += 2 {
		d0, d1 := a[i]-b[i], a[i+1]-b[i+1]
		se = math.FMA(d0, d0, se)
		so = math.FMA(d1, d1, so)
	}
	if i < len(a) {
		d := a[i] - b[i]
		se = math.FMA(d, d, se)
	}
	return math.Sqrt(se + so)
}

// Costs returns the |a|×|b| word-distance matrix, reusing buf.
func (s *Space) Costs(a, b Doc, buf []float64) []float64 {
	n, m := len(a.Words), len(b.Words)
	buf = grow(buf, n*m)
	l := s.lanes.Get().(*lanes)
	defer s.lanes.Put(l)
	// The shorter document's vectors are the lanes (transposed, for the
	// kernels), the other's taken one at a time: a row or a column of the
	// matrix per kernel call. A distance comes out the same either way.
	if m <= n {
		l.setWords(s.vec, b.Words)
		for r, i := range a.Words {
			row := buf[r*m : r*m+m]
			copy(row, l.from(s.vec.Vector(int(i))))
			for c, j := range b.Words {
				if i == j {
					row[c] = 0
				}
			}
		}
		return buf
	}
	l.setWords(s.vec, a.Words)
	for c, j := range b.Words {
		for r, d := range l.from(s.vec.Vector(int(j))) {
			if a.Words[r] == j {
				d = 0
			}
			buf[r*m+c] = d
		}
	}
	return buf
}

// WCD is the Word Centroid Distance ‖Xa − Xb‖, a lower bound of WMD.
func (s *Space) WCD(a, b Doc) float64 {
	if a.Empty() || b.Empty() {
		return math.Inf(1)
	}
	return dist(a.Centroid, b.Centroid)
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
	sol := s.solvers.Get().(*Solver)
	defer s.solvers.Put(sol)
	sol.cost = s.Costs(a, b, sol.cost)
	return sol.Solve(a.Weights, b.Weights, sol.cost)
}
