package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/semrank/semrank/analyzers"
)

// Config sets a trainer's hyper-parameters. Zero fields take the
// defaults listed in the package comment. Method MethodPPMI reads Dim,
// Window, MinCount, PruneTop and Seed only, and clears the others.
type Config struct {
	// Method is the trainer: MethodSGNS (the default) or MethodPPMI.
	Method   string  `json:"method,omitempty"`
	Dim      int     `json:"dim"`
	Window   int     `json:"window"`
	Negative int     `json:"negative,omitempty"`
	Epochs   int     `json:"epochs,omitempty"`
	MinCount int     `json:"min_count"`
	Sample   float64 `json:"sample,omitempty"` // sub-sampling threshold t (default 1e-3; negative: none)
	Alpha    float64 `json:"alpha,omitempty"`
	// PruneTop leaves the PruneTop most frequent words out of the
	// vocabulary (the paper prunes 30). Negative disables pruning.
	PruneTop int   `json:"prune_top"`
	Seed     int64 `json:"seed"`
	// Init optionally supplies pre-trained vectors to start from. Words
	// it has are kept in the vocabulary however rarely the sentences use
	// them (MinCount applies to the others): their vectors need no
	// in-domain evidence to mean something.
	Init *Vectors `json:"-"`
}

// DefaultConfig returns the defaults zero fields take (the package
// comment lists them), for callers that show or override them.
func DefaultConfig() Config { return Config{}.withDefaults() }

// The trainers Config.Method names.
const (
	// MethodSGNS is the skip-gram with negative sampling (Mikolov et al.,
	// 2013), as word2vec trains it.
	MethodSGNS = "sgns"
	// MethodPPMI is the truncated SVD of the words' positive pointwise
	// mutual information with their contexts (Levy, Goldberg & Dagan,
	// 2015): see Train.
	MethodPPMI = "ppmi"
)

func (c Config) withDefaults() Config {
	if c.Method == MethodSGNS {
		c.Method = "" // one spelling of the default, in bundles and fingerprints
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Dim, 100)
	def(&c.Window, 5)
	def(&c.MinCount, 2)
	def(&c.PruneTop, 30)
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Method == MethodPPMI {
		// What only the skip-gram reads is not part of a counted model.
		c.Negative, c.Epochs, c.Sample, c.Alpha = 0, 0, 0, 0
		return c
	}
	def(&c.Negative, 5)
	def(&c.Epochs, 5)
	if c.Sample == 0 {
		c.Sample = 1e-3
	}
	if c.Alpha == 0 {
		c.Alpha = 0.025
	}
	return c
}

func (c Config) check() error {
	switch {
	case c.Method != "" && c.Method != MethodPPMI:
		return fmt.Errorf("embed: method %q: want %q or %q", c.Method, MethodSGNS, MethodPPMI)
	case c.Method == MethodPPMI && c.Init != nil:
		return errors.New("embed: method ppmi counts its vectors from the text alone; initial vectors are for method sgns")
	case c.Dim < 1 || c.Dim > MaxDim:
		return fmt.Errorf("embed: dim %d out of 1..%d", c.Dim, MaxDim)
	case c.Window < 1, c.MinCount < 1:
		return fmt.Errorf("embed: window and min_count must be ≥ 1 (got %d, %d)", c.Window, c.MinCount)
	case c.Method == MethodPPMI:
		return nil
	case c.Negative < 1, c.Epochs < 1:
		return fmt.Errorf("embed: negative and epochs must be ≥ 1 (got %d, %d)", c.Negative, c.Epochs)
	case math.IsNaN(c.Sample) || c.Alpha <= 0:
		return fmt.Errorf("embed: sample %g must be a number (negative: no sub-sampling) and alpha %g > 0", c.Sample, c.Alpha)
	case c.Init != nil && c.Init.Dim != c.Dim:
		return fmt.Errorf("embed: initial vectors have %d dimensions, config wants %d", c.Init.Dim, c.Dim)
	}
	return nil
}

// Vocabulary counts words and keeps those seen at least minCount times,
// minus the pruneTop most frequent, ordered by decreasing count (ties by
// word). It returns the kept words, their counts, and the pruned words.
func Vocabulary(sentences [][]string, minCount, pruneTop int) (words []string, counts []float64, pruned []string) {
	freq := map[string]int{}
	for _, s := range sentences {
		for _, w := range s {
			freq[w]++
		}
	}
	all := make([]string, 0, len(freq))
	for w, c := range freq {
		if c >= minCount {
			all = append(all, w)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if freq[all[i]] != freq[all[j]] {
			return freq[all[i]] > freq[all[j]]
		}
		return all[i] < all[j]
	})
	if pruneTop > 0 {
		k := min(pruneTop, len(all))
		pruned, all = all[:k], all[k:]
	}
	counts = make([]float64, len(all))
	for i, w := range all {
		counts[i] = float64(freq[w])
	}
	return all, counts, pruned
}

// trainVocabulary is Vocabulary with cfg's settings, keeping also the
// words below cfg.MinCount that cfg.Init has a vector for, in the same
// order (decreasing count, ties by word).
func trainVocabulary(sentences [][]string, cfg Config) ([]string, []float64) {
	if cfg.Init == nil || cfg.MinCount <= 1 {
		words, counts, _ := Vocabulary(sentences, cfg.MinCount, cfg.PruneTop)
		return words, counts
	}
	all, allCounts, _ := Vocabulary(sentences, 1, cfg.PruneTop)
	words, counts := all[:0:0], allCounts[:0:0]
	for i, w := range all {
		if _, ok := cfg.Init.Index(w); ok || allCounts[i] >= float64(cfg.MinCount) {
			words = append(words, w)
			counts = append(counts, allCounts[i])
		}
	}
	return words, counts
}

// sentenceIDs returns the sentences as indices into words, the words not
// in it dropped, keeping those left with two words or more: the pairs
// both trainers learn from.
func sentenceIDs(sentences [][]string, words []string) ([][]int32, error) {
	vocab := make(map[string]int32, len(words))
	for i, w := range words {
		vocab[w] = int32(i)
	}
	ids := make([][]int32, 0, len(sentences))
	for _, s := range sentences {
		var row []int32
		for _, w := range s {
			if i, ok := vocab[w]; ok {
				row = append(row, i)
			}
		}
		if len(row) > 1 {
			ids = append(ids, row)
		}
	}
	if len(ids) == 0 {
		return nil, errors.New("embed: no sentence has two in-vocabulary words")
	}
	return ids, nil
}

// rng is word2vec's linear congruential generator: fast, and makes runs
// reproducible across platforms.
type rng uint64

func (r *rng) next() uint64 {
	*r = *r*25214903917 + 11
	return uint64(*r)
}

func (r *rng) float() float32 { return float32(r.next()&0xFFFF) / 65536 }

const (
	expTableSize = 1000
	maxExp       = 6
	tableSize    = 1e7
)

// Train learns word vectors from tokenized sentences (see Tokenize and
// Sentences) by cfg.Method: skip-gram with negative sampling by default,
// or the SVD of PPMI counts (MethodPPMI, see ppmi.go). The vectors record the
// analyzer Tokenize uses (analyzers.WordsID) as the source of their words,
// so sentences must come from Tokenize.
func Train(ctx context.Context, sentences [][]string, cfg Config) (*Vectors, error) {
	return TrainWithProgress(ctx, sentences, cfg, nil)
}

// TrainWithProgress is Train, telling progress (when not nil) after each
// epoch how many of how many are done (MethodPPMI: 1 of 1, at the end).
func TrainWithProgress(ctx context.Context, sentences [][]string, cfg Config, progress func(epoch, epochs int)) (*Vectors, error) {
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	words, counts := trainVocabulary(sentences, cfg)
	if len(words) < 2 {
		return nil, fmt.Errorf("embed: vocabulary has %d words after pruning (need ≥ 2): corpus too small", len(words))
	}
	if cfg.Method == MethodPPMI {
		return trainPPMI(ctx, sentences, words, counts, cfg, progress)
	}
	var total float64
	for _, c := range counts {
		total += c
	}
	ids, err := sentenceIDs(sentences, words)
	if err != nil {
		return nil, err
	}

	n, d := len(words), cfg.Dim
	r := rng(cfg.Seed)
	syn0 := make([]float32, n*d)
	syn1 := make([]float32, n*d)
	for i := range syn0 {
		syn0[i] = (r.float() - 0.5) / float32(d)
	}
	if cfg.Init != nil {
		for i, w := range words {
			if v, ok := cfg.Init.Lookup(w); ok {
				for k, x := range v {
					syn0[i*d+k] = float32(x)
				}
			}
		}
	}
	table := unigramTable(counts)
	keep := make([]float32, n) // probability of keeping each word under sub-sampling
	for i, c := range counts {
		keep[i] = 1
		if cfg.Sample > 0 {
			f := c / total
			p := (math.Sqrt(f/cfg.Sample) + 1) * cfg.Sample / f
			keep[i] = float32(min(p, 1))
		}
	}
	var expTable [expTableSize]float32
	for i := range expTable {
		e := math.Exp((float64(i)/expTableSize*2 - 1) * maxExp)
		expTable[i] = float32(e / (e + 1))
	}

	var tokens int
	for _, s := range ids {
		tokens += len(s)
	}
	planned := float64(tokens * cfg.Epochs)
	alpha0 := float32(cfg.Alpha)
	alpha := alpha0
	grad := make([]float32, d)
	sent := make([]int32, 0, 256)
	targets := make([]int32, 0, cfg.Negative+1)
	rows := make([][]float32, 0, cfg.Negative+1)
	fs := make([]float32, 0, cfg.Negative+1)
	done := 0
	for ep := 0; ep < cfg.Epochs; ep++ {
		for si, s := range ids {
			if si%256 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				alpha = alpha0 * float32(max(1-float64(done)/(planned+1), 0.0001))
			}
			done += len(s)
			sent = sent[:0]
			for _, w := range s {
				if keep[w] >= 1 || keep[w] > r.float() {
					sent = append(sent, w)
				}
			}
			for pos, center := range sent {
				b := int(r.next() % uint64(cfg.Window))
				lo, hi := max(pos-cfg.Window+b, 0), min(pos+cfg.Window-b, len(sent)-1)
				for c := lo; c <= hi; c++ {
					if c == pos {
						continue
					}
					// As in word2vec, the context word's input vector is
					// trained to predict the centre word.
					in := syn0[int(sent[c])*d : int(sent[c])*d+d]
					clear(grad)
					// The centre word, then the negative samples other
					// than it, drawn in word2vec's order.
					targets = append(targets[:0], center)
					for k := 0; k < cfg.Negative; k++ {
						if t := table[(r.next()>>16)%uint64(len(table))]; t != center {
							targets = append(targets, t)
						}
					}
					rows = rows[:0]
					for _, t := range targets {
						rows = append(rows, syn1[int(t)*d:int(t)*d+d])
					}
					// Each target's dot product with in, summed in order as
					// one target after another would; when every target is
					// a different word, no target's update changes another's
					// row, so the dot products can all be taken first, their
					// sums interleaved (dots), and the vectors are the same
					// bits either way.
					distinct := true
					for i := 1; i < len(targets) && distinct; i++ {
						distinct = !slices.Contains(targets[:i], targets[i])
					}
					if distinct {
						fs = dots(in, rows, fs[:0])
					}
					for k, out := range rows {
						var f float32
						if distinct {
							f = fs[k]
						} else {
							f = dot(in, out)
						}
						label := float32(0)
						if k == 0 {
							label = 1
						}
						var g float32
						switch {
						case f > maxExp:
							g = (label - 1) * alpha
						case f < -maxExp:
							g = label * alpha
						default:
							g = (label - expTable[int((f+maxExp)*(expTableSize/maxExp/2))]) * alpha
						}
						update(grad, out, in, g)
					}
					for j, x := range grad {
						in[j] += x
					}
				}
			}
		}
		if progress != nil {
			progress(ep+1, cfg.Epochs)
		}
	}
	data := make([]float64, n*d)
	for i, x := range syn0 {
		data[i] = float64(x)
	}
	return trained(words, counts, d, data)
}

// trained returns a trainer's vectors: words with their counts in the
// training text, from Tokenize's analyzer.
func trained(words []string, counts []float64, dim int, data []float64) (*Vectors, error) {
	v, err := NewVectors(words, dim, data)
	if err != nil {
		return nil, err
	}
	v.Counts = counts
	v.Analyzer = analyzers.WordsID()
	return v, nil
}

// update adds g·out to grad, then g·in to out, element by element. The
// explicit float32 conversions round each product, so the compiler cannot
// fuse x*y+z into one FMA instruction (it does on arm64 and amd64 v3):
// the vectors are the same bits on every platform. A function of its own,
// so that its few slices stay in registers.
func update(grad, out, in []float32, g float32) {
	out, in = out[:len(grad)], in[:len(grad)]
	for j := range grad {
		grad[j] += float32(g * out[j])
		out[j] += float32(g * in[j])
	}
}

// dot returns the dot product of a and b (b at least as long as a),
// summed in order, each product rounded to float32 (see update).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var f float32
	for j := range a {
		f += float32(a[j] * b[j])
	}
	return f
}

// dots appends to fs the dot product of in with each row of rows, each
// summed exactly as dot sums it. Three sums at a time run interleaved:
// one sum is a chain of dependent additions, which the processor cannot
// overlap, while three independent chains go about three times as fast.
func dots(in []float32, rows [][]float32, fs []float32) []float32 {
	for len(rows) >= 3 {
		a, b, c := rows[0][:len(in)], rows[1][:len(in)], rows[2][:len(in)]
		var fa, fb, fc float32
		for j, x := range in {
			fa += float32(x * a[j])
			fb += float32(x * b[j])
			fc += float32(x * c[j])
		}
		fs = append(fs, fa, fb, fc)
		rows = rows[3:]
	}
	for _, r := range rows {
		fs = append(fs, dot(in, r))
	}
	return fs
}

// unigramTable returns word2vec's negative-sampling table: word ids in
// proportion to count^0.75, capped in size for small vocabularies.
func unigramTable(counts []float64) []int32 {
	var z float64
	for _, c := range counts {
		z += math.Pow(c, 0.75)
	}
	size := int(min(tableSize, max(float64(len(counts))*100, 1000)))
	table := make([]int32, size)
	i := 0
	cum := math.Pow(counts[0], 0.75) / z
	for a := range table {
		table[a] = int32(i)
		if float64(a)/float64(size) > cum && i < len(counts)-1 {
			i++
			cum += math.Pow(counts[i], 0.75) / z
		}
	}
	return table
}
