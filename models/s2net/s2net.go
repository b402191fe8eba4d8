// Package s2net is S2Net (Yih, Toutanova, Platt & Meek, 2011): a d×k
// projection A, learned discriminatively, maps raw term vectors f (TF-IDF,
// or weights from a learned term-weighting model such as TWEAK) to concept
// vectors g = Aᵀf, and two texts are compared by the cosine of their
// concept vectors. A minimises the pairwise logistic loss
// log(1+exp(−γΔ)) over pairs of similarity scores whose order is known,
// with the whole-batch gradient of Appendix A and L-BFGS, starting from
// LSA (or a random matrix) and stopped early on held-out queries.
//
// Training signal, and choices the paper leaves open:
//
//   - Preference pairs come from judged candidate lists: for a query q and
//     candidates d_i, d_j with grade(d_i) > grade(d_j), Δ = cos(q,d_i) −
//     cos(q,d_j) (the paper's ad-relevance construction).
//   - Comparable pairs (a_i, b_i) — a question's subject and body, a
//     question and a good answer — use "all other pairs as negatives"
//     (the paper's cross-lingual construction), in both directions, but
//     only within blocks of Config.Block pairs: the paper uses the whole
//     batch, which for n pairs needs an n×n cosine matrix; blocks keep
//     memory at Block² while reusing each projection across the block.
//   - The objective is the mean preference-pair loss plus PairWeight times
//     the mean comparable-pair loss, so neither source swamps the other by
//     sheer count.
//   - Early stopping (the paper's regulariser) watches map@10 on held-out
//     lists after every L-BFGS iteration, keeps the best A, and stops after
//     Patience iterations without improvement. The starting matrix counts
//     as iteration 0, so training never returns something worse on the
//     held-out lists than its initialisation.
//   - Random initialisation draws A from N(0, 1/d); the cosine is scale-free,
//     so only the direction matters.
package s2net

import (
	"fmt"
	"io"

	"gonum.org/v1/gonum/mat"

	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/lsa"
)

// Method is the model-bundle method name; Version the tensor layout.
const (
	Method  = "s2net"
	Version = 1
)

// Config controls S2Net training.
type Config struct {
	Dim    int                 `json:"dim"`    // k (default 100)
	Gamma  float64             `json:"gamma"`  // loss scale γ (default 10)
	Init   string              `json:"init"`   // "lsa" (default) or "random"
	Scheme concept.Scheme      `json:"scheme"` // input weighting without a Weighter (default tfidf)
	Space  concept.SpaceConfig `json:"space"`  // vocabulary selection
	LSA    lsa.Config          `json:"lsa"`    // SVD settings for Init "lsa"
	// WeighterID is the ID of the term-weighting model that supplied the
	// input weights; empty means Scheme weighting.
	WeighterID string  `json:"weighter_id,omitempty"`
	MaxIter    int     `json:"max_iter"`    // L-BFGS iterations (default 100)
	Patience   int     `json:"patience"`    // early stopping patience (default 10)
	Store      int     `json:"store"`       // L-BFGS memory (default 5)
	PairWeight float64 `json:"pair_weight"` // weight of the comparable-pair loss (default 1; 0 keeps the default, <0 ignores pairs)
	Block      int     `json:"block"`       // comparable pairs per block (default 256)
	MaxPairs   int     `json:"max_pairs"`   // use at most this many comparable pairs (0: all)
	DevFrac    float64 `json:"dev_frac"`    // held-out fraction of lists when no dev lists are given (default 0.2)
	// Refit, when no dev lists are given, trains again on every list
	// (held-out ones included) for the number of iterations that did best
	// on the held-out lists, so that early stopping costs no training data.
	Refit   bool   `json:"refit,omitempty"`
	Seed    uint64 `json:"seed"`
	Workers int    `json:"-"` // goroutines for the gradient (default GOMAXPROCS)
}

func (c Config) withDefaults() Config {
	if c.Dim <= 0 {
		c.Dim = 100
	}
	if c.Gamma <= 0 {
		c.Gamma = 10
	}
	if c.Init == "" {
		c.Init = "lsa"
	}
	if c.Scheme == "" {
		c.Scheme = concept.TFIDF
	}
	if c.MaxIter <= 0 {
		c.MaxIter = 100
	}
	if c.Patience <= 0 {
		c.Patience = 10
	}
	if c.Store <= 0 {
		c.Store = 5
	}
	if c.PairWeight == 0 {
		c.PairWeight = 1
	}
	if c.Block <= 1 {
		c.Block = 256
	}
	if c.DevFrac == 0 {
		c.DevFrac = 0.2
	}
	c.LSA.Dim = c.Dim
	c.LSA.Scheme = c.Scheme
	c.LSA.Seed = c.Seed
	return c
}

// Weighter supplies a text's input term weights in place of TF-IDF: a
// learned term-weighting model such as TWEAK. Terms are analyzed index
// terms (analyzers.Tokens).
type Weighter interface {
	TermWeights(text string) map[string]float64
	// ID identifies the weighting model, so a saved S2Net model can refuse
	// to run with weights other than those it was trained on.
	ID() string
}

// Model is a trained S2Net projection.
type Model struct {
	Config   Config
	Space    *concept.Space
	A        *mat.Dense // d×k
	weighter Weighter
}

// Features returns the raw term vector f of text.
func (m *Model) Features(text string) concept.Sparse {
	return features(m.Space, m.Config.Scheme, m.weighter, text)
}

func features(s *concept.Space, scheme concept.Scheme, w Weighter, text string) concept.Sparse {
	if w != nil {
		return s.Weigh(w.TermWeights(text))
	}
	return s.Vector(text, scheme)
}

// Dim returns k.
func (m *Model) Dim() int { _, k := m.A.Dims(); return k }

// Embed returns the concept vector Aᵀf of text.
func (m *Model) Embed(text string) []float64 { return concept.Project(m.A, m.Features(text)) }

// Similarity returns the cosine of two texts' concept vectors.
func (m *Model) Similarity(a, b string) float64 { return concept.Cosine(m.Embed(a), m.Embed(b)) }

// Bundle returns the model as a model bundle.
func (m *Model) Bundle() (*models.Bundle, error) {
	b := models.New(Method, Version)
	if err := b.SetConfig(m.Config); err != nil {
		return nil, err
	}
	m.Space.AddTo(b)
	concept.AddMatrix(b, "A", m.A)
	return b, nil
}

// Save writes the model to path.
func (m *Model) Save(path string) error { return concept.Save(m, path) }

// Load reads a model written by Save. w must be the term-weighting model
// the S2Net model was trained with, or nil when it was trained on Scheme
// weights; a mismatch is an error.
func Load(path string, w Weighter) (*Model, error) {
	return models.LoadWith(path, func(r io.Reader, name string) (*Model, error) { return Read(r, name, w) })
}

// Read reads a model written by Save from r, as Load does; name, the file
// r reads, is for errors.
func Read(r io.Reader, name string, w Weighter) (*Model, error) {
	return models.ReadAs(r, name, Method, Version, func(b *models.Bundle) (*Model, error) { return FromBundle(b, w) })
}

// FromBundle decodes a model bundle (see Load).
func FromBundle(b *models.Bundle, w Weighter) (*Model, error) {
	var cfg Config
	if err := b.Config(&cfg); err != nil {
		return nil, err
	}
	if _, err := concept.ParseScheme(string(cfg.Scheme)); err != nil {
		return nil, fmt.Errorf("s2net: model config: %w", err)
	}
	switch {
	case cfg.WeighterID == "" && w != nil:
		return nil, fmt.Errorf("s2net: model was trained on %s inputs, but a term-weighting model (%s) was given", cfg.Scheme, w.ID())
	case cfg.WeighterID != "" && w == nil:
		return nil, fmt.Errorf("s2net: model was trained on weights from %s; load it with that term-weighting model", cfg.WeighterID)
	case cfg.WeighterID != "" && w.ID() != cfg.WeighterID:
		return nil, fmt.Errorf("s2net: model was trained on weights from %s, not %s", cfg.WeighterID, w.ID())
	}
	space, err := concept.SpaceFrom(b)
	if err != nil {
		return nil, err
	}
	a, err := concept.MatrixFrom(b, "A", space.Dim())
	if err != nil {
		return nil, err
	}
	return &Model{Config: cfg, Space: space, A: a, weighter: w}, nil
}

// ID identifies the model's content (see models.Bundle.ID).
func (m *Model) ID() string { return concept.ModelID(m) }

// PayloadEncoder returns the index-time encoder of document concept
// vectors under the payload name (default "s2net").
func (m *Model) PayloadEncoder(name string) concept.PayloadEncoder {
	return concept.EncoderFor(name, Method, m)
}
