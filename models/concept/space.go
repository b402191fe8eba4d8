package concept

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/models"
)

// Scheme is a term-weighting scheme for the raw term vector.
type Scheme string

// The weighting schemes a Space can apply.
const (
	TFIDF     Scheme = "tfidf"    // tf·log(N/df)
	TFIDFNorm Scheme = "tfidf-l2" // tf·log(N/df), scaled to unit length
	Binary    Scheme = "binary"   // 1 for every term present
)

// ParseScheme checks a scheme name.
func ParseScheme(s string) (Scheme, error) {
	switch Scheme(s) {
	case TFIDF, TFIDFNorm, Binary:
		return Scheme(s), nil
	}
	return "", fmt.Errorf("concept: unknown term weighting %q (want tfidf, tfidf-l2 or binary)", s)
}

// SpaceConfig chooses a vocabulary.
type SpaceConfig struct {
	MinDF      int     `json:"min_df"`       // keep terms in at least this many texts (default 2)
	MaxDFRatio float64 `json:"max_df_ratio"` // drop terms in more than this fraction of texts (default 0.5, also taken for values outside (0, 1])
	MaxTerms   int     `json:"max_terms"`    // keep at most this many terms, most frequent first (0: all)
}

func (c SpaceConfig) withDefaults() SpaceConfig {
	if c.MinDF <= 0 {
		c.MinDF = 2
	}
	if c.MaxDFRatio <= 0 || c.MaxDFRatio > 1 {
		c.MaxDFRatio = 0.5
	}
	return c
}

// Space is a vocabulary with document frequencies: the input layer every
// concept model projects from.
type Space struct {
	Terms []string
	DF    []float64 // document frequency of each term in the fitting texts
	N     int       // number of fitting texts
	// Analyzer identifies the analyzer the terms came from: analyzers.ID()
	// for a space built by BuildSpace; for a loaded one, what its bundle
	// recorded ("" when saved before analyzers were recorded). AddTo
	// writes it back unchanged, so re-saving an old model neither claims
	// an analyzer nobody checked nor changes its ID.
	Analyzer string
	index    map[string]int
}

// ErrNoTerms is returned when a vocabulary would be empty.
var ErrNoTerms = errors.New("concept: no terms survive the vocabulary filter")

// BuildSpace fits a vocabulary to texts.
func BuildSpace(texts []string, cfg SpaceConfig) (*Space, error) {
	cfg = cfg.withDefaults()
	if len(texts) == 0 {
		return nil, errors.New("concept: no texts to build a vocabulary from")
	}
	df := map[string]int{}
	for _, t := range texts {
		seen := map[string]bool{}
		for _, tok := range analyzers.CachedTokens(t) {
			if !seen[tok] {
				seen[tok] = true
				df[tok]++
			}
		}
	}
	maxDF := int(cfg.MaxDFRatio * float64(len(texts)))
	var terms []string
	for t, n := range df {
		if n >= cfg.MinDF && n <= maxDF {
			terms = append(terms, t)
		}
	}
	sort.Slice(terms, func(i, j int) bool {
		if df[terms[i]] != df[terms[j]] {
			return df[terms[i]] > df[terms[j]]
		}
		return terms[i] < terms[j]
	})
	if cfg.MaxTerms > 0 && len(terms) > cfg.MaxTerms {
		terms = terms[:cfg.MaxTerms]
	}
	if len(terms) == 0 {
		return nil, ErrNoTerms
	}
	s := &Space{Terms: terms, DF: make([]float64, len(terms)), N: len(texts), Analyzer: analyzers.ID()}
	for i, t := range terms {
		s.DF[i] = float64(df[t])
	}
	s.buildIndex()
	return s, nil
}

func (s *Space) buildIndex() {
	s.index = make(map[string]int, len(s.Terms))
	for i, t := range s.Terms {
		s.index[t] = i
	}
}

// Dim returns the vocabulary size.
func (s *Space) Dim() int { return len(s.Terms) }

// Lookup returns the index of an analyzed term.
func (s *Space) Lookup(term string) (int, bool) {
	i, ok := s.index[term]
	return i, ok
}

// IDF returns log(N/df) of term i.
func (s *Space) IDF(i int) float64 { return math.Log(float64(s.N) / s.DF[i]) }

// Counts returns the in-vocabulary term frequencies of text. The term
// indices are sorted and counted in runs, which for a document's few dozen
// terms allocates less than a map.
func (s *Space) Counts(text string) Sparse {
	toks := analyzers.CachedTokens(text)
	idx := make([]int, 0, len(toks))
	for _, tok := range toks {
		if i, ok := s.index[tok]; ok {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	v := Sparse{Idx: idx[:0], Val: make([]float64, 0, len(idx))}
	for k := 0; k < len(idx); {
		n := 1
		for k+n < len(idx) && idx[k+n] == idx[k] {
			n++
		}
		v.Idx = append(v.Idx, idx[k])
		v.Val = append(v.Val, float64(n))
		k += n
	}
	return v
}

// Vector returns the term vector of text under scheme.
func (s *Space) Vector(text string, scheme Scheme) Sparse {
	v := s.Counts(text)
	switch scheme {
	case Binary:
		for i := range v.Val {
			v.Val[i] = 1
		}
	case TFIDF, TFIDFNorm:
		for i, j := range v.Idx {
			v.Val[i] *= s.IDF(j)
		}
		if scheme == TFIDFNorm {
			v = v.Normalized()
		}
	}
	return v
}

// Weigh maps externally computed term weights (e.g. TWEAK's) into the
// space; out-of-vocabulary terms are dropped.
func (s *Space) Weigh(w map[string]float64) Sparse {
	m := map[int]float64{}
	for t, x := range w {
		if i, ok := s.index[t]; ok && x != 0 {
			m[i] += x
		}
	}
	return fromMap(m)
}

func fromMap(m map[int]float64) Sparse {
	v := Sparse{Idx: make([]int, 0, len(m)), Val: make([]float64, 0, len(m))}
	for i := range m {
		v.Idx = append(v.Idx, i)
	}
	sort.Ints(v.Idx)
	for _, i := range v.Idx {
		v.Val = append(v.Val, m[i])
	}
	return v
}

// Hash identifies the vocabulary (see models.HashStrings).
func (s *Space) Hash() string { return models.HashStrings(s.Terms) }

// Section names a Space uses inside a model bundle.
const (
	vocabSection = "vocab"
	dfSection    = "df"
)

// AddTo stores the space in a model bundle and sets its vocabulary hash
// and analyzer.
func (s *Space) AddTo(b *models.Bundle) {
	b.AddStrings(vocabSection, s.Terms)
	df := append([]float64{float64(s.N)}, s.DF...)
	b.AddTensor(dfSection, []int{len(df)}, df)
	b.Manifest.VocabHash = s.Hash()
	b.Manifest.Analyzer = s.Analyzer
}

// SpaceFrom reads the space a bundle holds, checking it is consistent and
// that its terms came from the analyzer this build uses (analyzers.ID).
func SpaceFrom(b *models.Bundle) (*Space, error) {
	if err := b.CheckAnalyzer(analyzers.ID()); err != nil {
		return nil, err
	}
	terms, err := b.Strings(vocabSection)
	if err != nil {
		return nil, err
	}
	df, err := b.Tensor(dfSection, 1)
	if err != nil {
		return nil, err
	}
	if len(df.Data) != len(terms)+1 {
		return nil, fmt.Errorf("concept: %s model has %d terms but %d document frequencies", b.Manifest.Method, len(terms), len(df.Data)-1)
	}
	if err := b.CheckVocab(models.HashStrings(terms)); err != nil {
		return nil, err
	}
	s := &Space{Terms: terms, N: int(df.Data[0]), DF: df.Data[1:], Analyzer: b.Manifest.Analyzer}
	if s.N <= 0 || len(terms) == 0 {
		return nil, fmt.Errorf("concept: %s model has an empty vocabulary", b.Manifest.Method)
	}
	for i, d := range s.DF {
		if !(d >= 1 && d <= float64(s.N)) {
			return nil, fmt.Errorf("concept: %s model: document frequency %v of %q outside [1, %d]", b.Manifest.Method, d, terms[i], s.N)
		}
	}
	s.buildIndex()
	if len(s.index) != len(terms) {
		return nil, fmt.Errorf("concept: %s model vocabulary has duplicate terms", b.Manifest.Method)
	}
	return s, nil
}
