package embed

import (
	"fmt"
	"io"
	"math"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/models"
)

// Method and Version identify embed bundles.
const (
	Method  = "embed"
	Version = 1
)

// Vectors is a vocabulary with one dense vector per word.
type Vectors struct {
	Words []string
	Dim   int
	// Data holds len(Words)×Dim values, row-major: word i's vector is
	// Data[i*Dim : (i+1)*Dim].
	Data []float64
	// Counts holds each word's corpus frequency when known (trained
	// vectors); nil for loaded pre-trained vectors.
	Counts []float64
	// Analyzer identifies the analyzer the words came from: the one
	// Tokenize uses (analyzers.WordsID) for trained vectors; "" for
	// pre-trained vectors read from word2vec or GloVe files, whose words no
	// semrank analyzer produced; for vectors read from a bundle, what it
	// recorded (kept, so re-saving neither claims an analyzer nobody
	// checked nor changes the file).
	Analyzer string

	index map[string]int
}

// NewVectors checks and indexes a vocabulary and its vectors. Duplicate
// words, a size mismatch and non-finite values are errors.
func NewVectors(words []string, dim int, data []float64) (*Vectors, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("embed: dimension %d, want > 0", dim)
	}
	if len(data) != len(words)*dim {
		return nil, fmt.Errorf("embed: %d words × %d dimensions need %d values, got %d", len(words), dim, len(words)*dim, len(data))
	}
	v := &Vectors{Words: words, Dim: dim, Data: data, index: make(map[string]int, len(words))}
	for i, w := range words {
		if _, dup := v.index[w]; dup {
			return nil, fmt.Errorf("embed: word %q appears twice", w)
		}
		v.index[w] = i
	}
	for i, x := range data {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("embed: word %q has a non-finite value", words[i/dim])
		}
	}
	return v, nil
}

// Len returns the vocabulary size.
func (v *Vectors) Len() int { return len(v.Words) }

// Index returns the row of word w.
func (v *Vectors) Index(w string) (int, bool) {
	i, ok := v.index[w]
	return i, ok
}

// Vector returns row i (not a copy).
func (v *Vectors) Vector(i int) []float64 { return v.Data[i*v.Dim : (i+1)*v.Dim] }

// Lookup returns the vector of word w.
func (v *Vectors) Lookup(w string) ([]float64, bool) {
	i, ok := v.index[w]
	if !ok {
		return nil, false
	}
	return v.Vector(i), true
}

// Bundle returns the vectors as an "embed" model bundle. The manifest
// records cfg with its zero fields replaced by the defaults Train used.
func (v *Vectors) Bundle(cfg Config) (*models.Bundle, error) {
	b := models.New(Method, Version)
	if err := b.SetConfig(cfg.withDefaults()); err != nil {
		return nil, err
	}
	b.AddStrings("vocab", v.Words)
	b.AddTensor("vectors", []int{len(v.Words), v.Dim}, v.Data)
	if v.Counts != nil {
		b.AddTensor("counts", []int{len(v.Counts)}, v.Counts)
	}
	b.Manifest.VocabHash = models.HashStrings(v.Words)
	b.Manifest.Analyzer = v.Analyzer
	return b, nil
}

// Save writes the vectors to path as an "embed" bundle.
func (v *Vectors) Save(path string, cfg Config) error {
	b, err := v.Bundle(cfg)
	if err != nil {
		return err
	}
	return b.Save(path)
}

// FromBundle reads vectors from an "embed" bundle, refusing vectors whose
// words came from another version of the analyzer Tokenize uses: this
// build's words would not find their vectors.
func FromBundle(b *models.Bundle) (*Vectors, error) {
	if b.Manifest.Method != Method {
		return nil, fmt.Errorf("embed: bundle is a %q model, want %q", b.Manifest.Method, Method)
	}
	if err := b.CheckAnalyzer(analyzers.WordsID()); err != nil {
		return nil, err
	}
	words, err := b.Strings("vocab")
	if err != nil {
		return nil, err
	}
	t, err := b.Tensor("vectors", 2)
	if err != nil {
		return nil, err
	}
	if t.Shape[0] != len(words) {
		return nil, fmt.Errorf("embed: %d vectors for %d words", t.Shape[0], len(words))
	}
	if err := b.CheckVocab(models.HashStrings(words)); err != nil {
		return nil, err
	}
	v, err := NewVectors(words, t.Shape[1], t.Data)
	if err != nil {
		return nil, err
	}
	// Counts are optional (pre-trained vectors have none), but a counts
	// section that is there must be whole: skipping a damaged one would
	// lose it when the vectors are saved again.
	if c, err := b.Tensor("counts", 0); err == nil {
		if len(c.Shape) != 1 || len(c.Data) != len(words) {
			return nil, fmt.Errorf("embed: counts tensor has shape %v, want [%d] (one count per word)", c.Shape, len(words))
		}
		for i, x := range c.Data {
			if !(x >= 0) || math.IsInf(x, 0) || x != math.Trunc(x) {
				return nil, fmt.Errorf("embed: count of word %q is %v, want a non-negative integer", words[i], x)
			}
		}
		v.Counts = c.Data
	}
	v.Analyzer = b.Manifest.Analyzer
	return v, nil
}

// Load reads an "embed" bundle from path.
func Load(path string) (*Vectors, error) { return models.LoadWith(path, Read) }

// Read reads an "embed" bundle from r; name, the file r reads, is for
// errors.
func Read(r io.Reader, name string) (*Vectors, error) {
	b, err := models.ReadChecked(r, name, Method, Version)
	if err != nil {
		return nil, err
	}
	v, err := FromBundle(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}
