package translation

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/models"
)

// sumSlack is how far above 1 a probability distribution's sum may be
// after rounding.
const sumSlack = 1e-6

// Bundle returns the model as a bundle. The table is stored as three
// parallel tensors, one entry per (source, target) pair in order: source
// word, target word, probability.
func (m *Model) Bundle() (*models.Bundle, error) {
	if len(m.Vocab) == 0 || len(m.Background) != len(m.Vocab)+1 || len(m.Rows) != len(m.Vocab) {
		return nil, fmt.Errorf("translation: incomplete model (%d words, %d background probabilities, %d rows)", len(m.Vocab), len(m.Background), len(m.Rows))
	}
	b := models.New(Method, Version)
	if err := b.SetConfig(m.Config); err != nil {
		return nil, err
	}
	b.AddStrings("vocab", m.Vocab)
	b.AddTensor("background", []int{len(m.Background)}, m.Background)
	var src, dst, p []float64
	for s, r := range m.Rows {
		for k, w := range r.Targets {
			src = append(src, float64(s))
			dst = append(dst, float64(w))
			p = append(p, r.P[k])
		}
	}
	for _, t := range []struct {
		name string
		data []float64
	}{{"source", src}, {"target", dst}, {"p", p}} {
		b.AddTensor(t.name, []int{len(t.data)}, t.data)
	}
	b.Manifest.VocabHash = models.HashStrings(m.Vocab)
	b.Manifest.Analyzer = m.Analyzer
	return b, nil
}

// Save writes the model to path.
func (m *Model) Save(path string) error {
	b, err := m.Bundle()
	if err != nil {
		return err
	}
	return b.Save(path)
}

// Load reads a model saved by Save.
func Load(path string) (*Model, error) { return models.LoadWith(path, Read) }

// Read reads a model saved by Save from r; name, the file r reads, is for
// errors.
func Read(r io.Reader, name string) (*Model, error) {
	return models.ReadAs(r, name, Method, Version, fromBundle)
}

func fromBundle(b *models.Bundle) (*Model, error) {
	// The table's words are analyzer tokens: another analyzer's tokens
	// would miss them silently.
	if b.Manifest.Analyzer == "" {
		return nil, errors.New("model records no analyzer")
	}
	if err := b.CheckAnalyzer(analyzers.ID()); err != nil {
		return nil, err
	}
	m := &Model{Analyzer: b.Manifest.Analyzer}
	if err := b.Config(&m.Config); err != nil {
		return nil, err
	}
	if err := m.Config.check(); err != nil {
		return nil, err
	}
	var err error
	if m.Vocab, err = readVocab(b); err != nil {
		return nil, err
	}
	v := len(m.Vocab)
	if m.Background, err = readBackground(b, v); err != nil {
		return nil, err
	}
	if err := m.checkFloor(); err != nil {
		return nil, err
	}
	if m.Rows, err = readRows(b, v); err != nil {
		return nil, err
	}
	m.buildIndex()
	return m, nil
}

// readVocab reads the vocabulary Bundle stores: words sorted and unique,
// at least one, matching the manifest's hash.
func readVocab(b *models.Bundle) ([]string, error) {
	vocab, err := b.Strings("vocab")
	if err != nil {
		return nil, err
	}
	if len(vocab) == 0 {
		return nil, errors.New("empty vocabulary")
	}
	if err := b.CheckVocab(models.HashStrings(vocab)); err != nil {
		return nil, err
	}
	for i := 1; i < len(vocab); i++ {
		if vocab[i] <= vocab[i-1] {
			return nil, fmt.Errorf("vocabulary is not sorted and unique at %q", vocab[i])
		}
	}
	return vocab, nil
}

// readBackground reads the collection model Bundle stores for v words:
// their probabilities, a (sub-)distribution, then an unknown word's, in
// (0, 1]. The unknown word's is not part of the sum: with every word of
// the collection kept, the words' own sum to 1.
func readBackground(b *models.Bundle, v int) ([]float64, error) {
	bg, err := b.Tensor("background", 1)
	if err != nil {
		return nil, err
	}
	if len(bg.Data) != v+1 {
		return nil, fmt.Errorf("%d background probabilities for %d words, want %d", len(bg.Data), v, v+1)
	}
	if err := checkDistribution("background", bg.Data[:v]); err != nil {
		return nil, err
	}
	if p := bg.Data[v]; !(p > 0 && p <= 1) {
		return nil, fmt.Errorf("background: an unknown word's probability %v, want in (0, 1]", p)
	}
	return bg.Data, nil
}

// readRows reads the table Bundle stores: entries sorted by source, then
// target, every word below v, each source's probabilities a
// (sub-)distribution.
func readRows(b *models.Bundle, v int) ([]Row, error) {
	ts, err := tableTensors(b)
	if err != nil {
		return nil, err
	}
	src, dst, p := ts[0], ts[1], ts[2]
	rows := make([]Row, v)
	prev, prevT := int32(-1), int32(-1)
	for k := range src {
		s, err := tableWord("source", src[k], v)
		if err != nil {
			return nil, err
		}
		t, err := tableWord("target", dst[k], v)
		if err != nil {
			return nil, err
		}
		if s < prev || (s == prev && t <= prevT) {
			return nil, fmt.Errorf("table entry %d (%d → %d) is out of order", k, s, t)
		}
		if !(p[k] > 0 && p[k] <= 1) {
			return nil, fmt.Errorf("table entry %d: probability %v, want in (0, 1]", k, p[k])
		}
		rows[s].Targets = append(rows[s].Targets, t)
		rows[s].P = append(rows[s].P, p[k])
		prev, prevT = s, t
	}
	for s, r := range rows {
		if err := checkDistribution("translations", r.P); err != nil {
			return nil, fmt.Errorf("source word %d: %w", s, err)
		}
	}
	return rows, nil
}

// tableTensors returns the table's three parallel tensors: source words,
// target words and probabilities.
func tableTensors(b *models.Bundle) ([3][]float64, error) {
	var ts [3][]float64
	for i, name := range []string{"source", "target", "p"} {
		t, err := b.Tensor(name, 1)
		if err != nil {
			return ts, err
		}
		ts[i] = t.Data
	}
	if n := len(ts[0]); len(ts[1]) != n || len(ts[2]) != n {
		return ts, fmt.Errorf("table tensors of %d sources, %d targets and %d probabilities, want equal lengths", n, len(ts[1]), len(ts[2]))
	}
	return ts, nil
}

// tableWord returns x, a table entry's source or target word (what), as
// a word index below v.
func tableWord(what string, x float64, v int) (int32, error) {
	if !(x >= 0 && x < float64(v)) || x != math.Trunc(x) {
		return 0, fmt.Errorf("table entry's %s word %g, want a whole number in 0..%d", what, x, v-1)
	}
	return int32(x), nil
}

// checkDistribution reports probabilities outside [0, 1] or summing above 1.
func checkDistribution(what string, p []float64) error {
	var sum float64
	for _, x := range p {
		if !(x >= 0 && x <= 1) {
			return fmt.Errorf("%s: probability %v, want in [0, 1]", what, x)
		}
		sum += x
	}
	if sum > 1+sumSlack {
		return fmt.Errorf("%s: probabilities sum to %v, above 1", what, sum)
	}
	return nil
}
