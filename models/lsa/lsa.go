// Package lsa is Latent Semantic Analysis (Deerwester et al., 1990), the
// baseline of the S2Net and DSE papers and S2Net's starting point: the
// truncated SVD X ≈ U_k Σ_k V_kᵀ of the weighted term–document matrix X
// (terms × documents) gives the d×k projection U_k, and a text's concept
// vector is g = U_kᵀ f for its term vector f; texts are compared by the
// cosine of their concept vectors.
//
// Choices the papers leave open, made here:
//
//   - The projection is U_k itself (not Σ_k⁻¹U_k): folding a training
//     document in then gives Σ_k v, the usual LSI document coordinates, and
//     the d×k projection has the same form as S2Net's matrix A.
//   - Input weighting is TF-IDF (tf·log(N/df)), the S2Net paper's input.
//   - The term–document matrix is not mean-centred: term vectors are sparse
//     with means near zero, so LSA and PCA nearly coincide (S2Net §2.2).
//   - When the dense matrix would exceed Config.ExactMaxCells entries, or
//     its smaller side 256, the SVD is randomized (Halko, Martinsson &
//     Tropp, 2011, Alg. 4.4): a Gaussian sketch of k+Oversample columns,
//     PowerIters subspace iterations, and an exact SVD of the small
//     projected matrix.
package lsa

import (
	"errors"
	"fmt"
	"io"

	"gonum.org/v1/gonum/mat"

	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/models/concept"
)

// Method is the model-bundle method name; Version the tensor layout.
const (
	Method  = "lsa"
	Version = 1
)

// Config controls LSA training.
type Config struct {
	Dim           int                 `json:"dim"`             // k, concept dimensions (default 100)
	Scheme        concept.Scheme      `json:"scheme"`          // input term weighting (default tfidf)
	Space         concept.SpaceConfig `json:"space"`           // vocabulary selection
	Oversample    int                 `json:"oversample"`      // randomized SVD: extra sketch columns (default 10)
	PowerIters    int                 `json:"power_iters"`     // randomized SVD: subspace iterations (default 2)
	ExactMaxCells int                 `json:"exact_max_cells"` // use the exact SVD up to this many matrix cells (default 4e6), and only while the smaller side is at most 256
	Seed          uint64              `json:"seed"`
}

// exactMaxSide bounds the smaller side of a matrix given the exact SVD.
// Its cost grows with the cells times the smaller side: a 2,100 × 1,800
// matrix, under ExactMaxCells, took 19 s to factorize (and a Ctrl-C waits
// for it), the randomized SVD 0.13 s; at this bound the exact one takes at
// most about 1.5 s (15,625 × 256, on the 2-core development machine), and
// the randomized sketch (k + Oversample columns) would be much of the
// matrix anyway.
const exactMaxSide = 256

// useExact reports whether Fit factorizes the d×n matrix exactly.
func useExact(d, n int, cfg Config) bool {
	return d*n <= cfg.ExactMaxCells && min(d, n) <= exactMaxSide
}

func (c Config) withDefaults() Config {
	if c.Dim <= 0 {
		c.Dim = 100
	}
	if c.Scheme == "" {
		c.Scheme = concept.TFIDF
	}
	if c.Oversample <= 0 {
		c.Oversample = 10
	}
	if c.PowerIters < 0 {
		c.PowerIters = 0
	} else if c.PowerIters == 0 {
		c.PowerIters = 2
	}
	if c.ExactMaxCells <= 0 {
		c.ExactMaxCells = 4_000_000
	}
	return c
}

// Model is a fitted LSA projection.
type Model struct {
	Config Config
	Space  *concept.Space
	Proj   *mat.Dense // d×k, columns are the leading left singular vectors
	Sigma  []float64  // the k leading singular values, descending
}

// Train builds a vocabulary from texts and fits LSA to them.
func Train(texts []string, cfg Config) (*Model, error) {
	cfg = cfg.withDefaults()
	if _, err := concept.ParseScheme(string(cfg.Scheme)); err != nil {
		return nil, err
	}
	space, err := concept.BuildSpace(texts, cfg.Space)
	if err != nil {
		return nil, err
	}
	docs := make([]concept.Sparse, len(texts))
	for i, t := range texts {
		docs[i] = space.Vector(t, cfg.Scheme)
	}
	return Fit(space, docs, cfg)
}

// Fit computes the truncated SVD of the term–document matrix whose columns
// are docs (term vectors in space).
func Fit(space *concept.Space, docs []concept.Sparse, cfg Config) (*Model, error) {
	cfg = cfg.withDefaults()
	d, n := space.Dim(), len(docs)
	if n == 0 {
		return nil, errors.New("lsa: no documents")
	}
	if cfg.Dim > min(d, n) {
		return nil, fmt.Errorf("lsa: %d dimensions requested but the term–document matrix is only %d×%d", cfg.Dim, d, n)
	}
	var u *mat.Dense
	var sigma []float64
	var err error
	if useExact(d, n, cfg) {
		u, sigma, err = exactSVD(d, docs, cfg.Dim)
	} else {
		u, sigma, err = randomizedSVD(d, docs, cfg.Dim, cfg.Oversample, cfg.PowerIters, cfg.Seed)
	}
	if err != nil {
		return nil, err
	}
	return &Model{Config: cfg, Space: space, Proj: u, Sigma: sigma}, nil
}

// Dim returns k.
func (m *Model) Dim() int { _, k := m.Proj.Dims(); return k }

// Embed returns the concept vector of text.
func (m *Model) Embed(text string) []float64 {
	return concept.Project(m.Proj, m.Space.Vector(text, m.Config.Scheme))
}

// Similarity returns the cosine of two texts' concept vectors.
func (m *Model) Similarity(a, b string) float64 { return concept.Cosine(m.Embed(a), m.Embed(b)) }

// Bundle returns the model as a model bundle.
func (m *Model) Bundle() (*models.Bundle, error) {
	b := models.New(Method, Version)
	if err := b.SetConfig(m.Config); err != nil {
		return nil, err
	}
	m.Space.AddTo(b)
	_, k := m.Proj.Dims()
	concept.AddMatrix(b, "projection", m.Proj)
	b.AddTensor("sigma", []int{k}, append([]float64(nil), m.Sigma...))
	return b, nil
}

// Save writes the model to path.
func (m *Model) Save(path string) error { return concept.Save(m, path) }

// Load reads a model written by Save.
func Load(path string) (*Model, error) { return models.LoadWith(path, Read) }

// Read reads a model written by Save from r; name, the file r reads, is
// for errors.
func Read(r io.Reader, name string) (*Model, error) {
	return models.ReadAs(r, name, Method, Version, FromBundle)
}

// FromBundle decodes a model bundle, checking its tensors agree.
func FromBundle(b *models.Bundle) (*Model, error) {
	var cfg Config
	if err := b.Config(&cfg); err != nil {
		return nil, err
	}
	if _, err := concept.ParseScheme(string(cfg.Scheme)); err != nil {
		return nil, fmt.Errorf("lsa: model config: %w", err)
	}
	space, err := concept.SpaceFrom(b)
	if err != nil {
		return nil, err
	}
	proj, err := concept.MatrixFrom(b, "projection", space.Dim())
	if err != nil {
		return nil, err
	}
	_, k := proj.Dims()
	sig, err := b.Tensor("sigma", 1)
	if err != nil {
		return nil, err
	}
	if len(sig.Data) != k {
		return nil, fmt.Errorf("lsa: model has %d singular values for %d dimensions", len(sig.Data), k)
	}
	if err := concept.CheckFinite(sig.Data); err != nil {
		return nil, fmt.Errorf("lsa: singular values: %w", err)
	}
	return &Model{Config: cfg, Space: space, Proj: proj, Sigma: sig.Data}, nil
}

// ID identifies the model's content (see models.Bundle.ID).
func (m *Model) ID() string { return concept.ModelID(m) }

// PayloadEncoder returns the index-time encoder of document concept
// vectors under the payload name.
func (m *Model) PayloadEncoder(name string) concept.PayloadEncoder {
	return concept.EncoderFor(name, Method, m)
}
