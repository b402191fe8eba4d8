// Package dse is Deep Semantic Embedding (Wu, Min & Bai): a deep network
// Φ maps a text's word vector over the top-D vocabulary to a C-dimensional
// embedding, and a query and a document are scored by s(q,d) = Φ(q)·Φ(d).
// The network (by default D–D/2–D/2–D–C, binary hidden units, a linear
// top layer with unit-variance Gaussian noise in pretraining) is first
// pretrained greedily, layer by layer, as stacked RBMs with CD-1, then
// fine-tuned on triples (q, d+, d−) with the margin ranking loss
// max(0, 1 − s(q,d+) + s(q,d−)) by minibatch SGD with momentum. The score
// may be mixed linearly with TF-IDF cosine, the paper's best setting.
//
// Choices the paper leaves open, made here:
//
//   - The vocabulary is the D most frequent terms (document frequency)
//     after dropping terms in fewer than 2 or more than half of the texts,
//     as the paper's NIPS preprocessing drops too-rare and too-common words.
//   - Inputs are binary occurrence (default) or L2-normalised TF-IDF; the
//     first RBM treats them as Bernoulli probabilities either way.
//   - CD-1 samples the hidden states but uses the visible probabilities
//     (not samples) for the reconstruction, and each layer's data for the
//     next RBM is the previous layer's hidden probabilities (Hinton &
//     Salakhutdinov, 2006). Momentum is 0.9 and weight decay 1e-4 as in the
//     paper; the Gaussian top layer's learning rate is separate (smaller),
//     as linear units are less stable.
//   - Fine-tuning is deterministic: Φ uses hidden probabilities, not
//     samples. Minibatches replace the paper's single-triple SGD for speed
//     (the loss is summed over the batch and divided by its size).
//   - Fine-tuning updates the hidden biases c as well as the weights W (the
//     paper lists only the W^k as parameters); weight decay applies to W
//     only. Its default learning rate (Config.FineTuneLR, 0.001) is below
//     the range [0.01, 1] of the paper's Sec. 4.1.
//   - Triples come from judged lists (every candidate pair with different
//     grades) and from comparable pairs (a, b) with a random other pair's b
//     as d−. Held-out map@10 after each epoch selects the best weights;
//     training stops after Patience epochs without improvement.
//   - The TF-IDF mixing weight λ in s = Φ(q)·Φ(d) + λ·cos_tfidf(q,d) is
//     chosen on the held-out lists from a log grid (or fixed by Config.Mix).
package dse

import (
	"errors"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/models/concept"
)

// Method is the model-bundle method name; Version the tensor layout.
const (
	Method  = "dse"
	Version = 1
)

// Config controls DSE training.
type Config struct {
	D      int            `json:"d"`      // input vocabulary size (default 500)
	Hidden []int          `json:"hidden"` // hidden layer sizes below the top (default D/2, D/2, D)
	C      int            `json:"c"`      // embedding dimensions (default 50)
	Input  concept.Scheme `json:"input"`  // binary (default) or tfidf-l2

	PretrainEpochs int     `json:"pretrain_epochs"` // per RBM (default 5)
	PretrainLR     float64 `json:"pretrain_lr"`     // binary RBMs (default 0.05)
	GaussLR        float64 `json:"gauss_lr"`        // the Gaussian top RBM (default 0.001)
	Momentum       float64 `json:"momentum"`        // default 0.9
	WeightDecay    float64 `json:"weight_decay"`    // default 1e-4
	Batch          int     `json:"batch"`           // minibatch size (default 64)

	FineTuneEpochs int     `json:"finetune_epochs"` // default 20
	FineTuneLR     float64 `json:"finetune_lr"`     // default 0.001
	Patience       int     `json:"patience"`        // epochs without held-out improvement (default 5)
	PairNegatives  int     `json:"pair_negatives"`  // triples per comparable pair (default 1; <0 none)
	MaxTriples     int     `json:"max_triples"`     // triples sampled per epoch (0: all)
	DevFrac        float64 `json:"dev_frac"`        // held-out share of lists without explicit dev lists (default 0.2)

	// Mix is λ in Φ(q)·Φ(d) + λ·cos_tfidf(q,d); a negative value means
	// "choose on the held-out lists".
	Mix  float64 `json:"mix"`
	Seed uint64  `json:"seed"`
}

func (c Config) withDefaults() Config {
	if c.D <= 0 {
		c.D = 500
	}
	if len(c.Hidden) == 0 {
		c.Hidden = []int{max(1, c.D/2), max(1, c.D/2), c.D}
	}
	if c.C <= 0 {
		c.C = 50
	}
	if c.Input == "" {
		c.Input = concept.Binary
	}
	if c.PretrainEpochs == 0 {
		c.PretrainEpochs = 5
	}
	if c.PretrainLR <= 0 {
		c.PretrainLR = 0.05
	}
	if c.GaussLR <= 0 {
		c.GaussLR = 0.001
	}
	if c.Momentum <= 0 {
		c.Momentum = 0.9
	}
	if c.WeightDecay == 0 {
		c.WeightDecay = 1e-4
	}
	if c.Batch <= 0 {
		c.Batch = 64
	}
	if c.FineTuneEpochs == 0 {
		c.FineTuneEpochs = 20
	}
	if c.FineTuneLR <= 0 {
		c.FineTuneLR = 0.001
	}
	if c.Patience <= 0 {
		c.Patience = 5
	}
	if c.PairNegatives == 0 {
		c.PairNegatives = 1
	}
	if c.DevFrac == 0 {
		c.DevFrac = 0.2
	}
	return c
}

// checkFinite returns an error naming the first rate, weight or fraction
// that is NaN or infinite: withDefaults keeps those, and they would make
// every weight NaN, or train a model whose config cannot be saved.
func (c Config) checkFinite() error {
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"pretrain_lr", c.PretrainLR}, {"gauss_lr", c.GaussLR}, {"momentum", c.Momentum},
		{"weight_decay", c.WeightDecay}, {"finetune_lr", c.FineTuneLR}, {"dev_frac", c.DevFrac}, {"mix", c.Mix},
	} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("dse: %s is %v, want a finite number", f.name, f.v)
		}
	}
	return nil
}

// sizes returns the layer widths from input to top: D, hidden..., C.
func (c Config) sizes() []int {
	return append(append([]int{c.D}, c.Hidden...), c.C)
}

// layer is one weight matrix of the network with its biases: c feeds the
// layer's outputs (hidden units), b the reconstruction of its inputs
// (used only in pretraining).
type layer struct {
	W *mat.Dense // in×out
	B []float64  // in
	C []float64  // out
}

// Model is a trained DSE network.
type Model struct {
	Config Config
	Space  *concept.Space
	layers []layer // the last is linear
}

// Input returns the network input of text.
func (m *Model) Input(text string) concept.Sparse { return m.Space.Vector(text, m.Config.Input) }

// Embed returns Φ(text).
func (m *Model) Embed(text string) []float64 {
	x := mat.NewDense(1, m.Space.Dim(), m.Input(text).Dense(m.Space.Dim()))
	acts := m.forward(x)
	return acts[len(acts)-1].RawRowView(0)
}

// forward returns the activations of every layer for a batch of inputs
// (rows): acts[0] = x, acts[len] = Φ(x).
func (m *Model) forward(x *mat.Dense) []*mat.Dense {
	acts := []*mat.Dense{x}
	for i, l := range m.layers {
		acts = append(acts, l.up(acts[i], i < len(m.layers)-1))
	}
	return acts
}

// up returns x·W + c, through the logistic function when binary.
func (l layer) up(x *mat.Dense, binary bool) *mat.Dense {
	r, _ := x.Dims()
	_, out := l.W.Dims()
	h := mat.NewDense(r, out, nil)
	h.Mul(x, l.W)
	raw := h.RawMatrix()
	for i := range r {
		row := raw.Data[i*raw.Stride : i*raw.Stride+out]
		for j := range row {
			row[j] += l.C[j]
			if binary {
				row[j] = sigmoid(row[j])
			}
		}
	}
	return h
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// Score returns s(q,d) = Φ(q)·Φ(d) + Mix·cos_tfidf(q,d) given the
// embeddings and TF-IDF cosine.
func (m *Model) Score(phiQ, phiD []float64, tfidfCos float64) float64 {
	return concept.Dot(phiQ, phiD) + m.Config.Mix*tfidfCos
}

// TFIDFCosine returns the TF-IDF cosine of two texts over the model's
// vocabulary, the second term of the mixed score.
func (m *Model) TFIDFCosine(a, b string) float64 {
	return m.Space.Vector(a, concept.TFIDF).Cosine(m.Space.Vector(b, concept.TFIDF))
}

// Bundle returns the model as a model bundle.
func (m *Model) Bundle() (*models.Bundle, error) {
	b := models.New(Method, Version)
	if err := b.SetConfig(m.Config); err != nil {
		return nil, err
	}
	m.Space.AddTo(b)
	for i, l := range m.layers {
		concept.AddMatrix(b, fmt.Sprintf("w%d", i), l.W)
		b.AddTensor(fmt.Sprintf("b%d", i), []int{len(l.B)}, append([]float64(nil), l.B...))
		b.AddTensor(fmt.Sprintf("c%d", i), []int{len(l.C)}, append([]float64(nil), l.C...))
	}
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

// FromBundle decodes a model bundle, checking the layers fit together.
func FromBundle(b *models.Bundle) (*Model, error) {
	var cfg Config
	if err := b.Config(&cfg); err != nil {
		return nil, err
	}
	if _, err := concept.ParseScheme(string(cfg.Input)); err != nil {
		return nil, fmt.Errorf("dse: model config: %w", err)
	}
	if len(cfg.Hidden) == 0 || cfg.C <= 0 {
		return nil, errors.New("dse: model config has no layer sizes")
	}
	space, err := concept.SpaceFrom(b)
	if err != nil {
		return nil, err
	}
	sizes := cfg.sizes()
	if space.Dim() != sizes[0] {
		return nil, fmt.Errorf("dse: model vocabulary has %d terms, config says D=%d", space.Dim(), sizes[0])
	}
	m := &Model{Config: cfg, Space: space}
	for i := 0; i+1 < len(sizes); i++ {
		w, err := concept.MatrixFrom(b, fmt.Sprintf("w%d", i), sizes[i])
		if err != nil {
			return nil, err
		}
		if _, out := w.Dims(); out != sizes[i+1] {
			return nil, fmt.Errorf("dse: layer %d has %d outputs, config says %d", i, out, sizes[i+1])
		}
		bv, err := vectorFrom(b, fmt.Sprintf("b%d", i), sizes[i])
		if err != nil {
			return nil, err
		}
		cv, err := vectorFrom(b, fmt.Sprintf("c%d", i), sizes[i+1])
		if err != nil {
			return nil, err
		}
		m.layers = append(m.layers, layer{W: w, B: bv, C: cv})
	}
	return m, nil
}

func vectorFrom(b *models.Bundle, name string, n int) ([]float64, error) {
	t, err := b.Tensor(name, 1)
	if err != nil {
		return nil, err
	}
	if len(t.Data) != n {
		return nil, fmt.Errorf("dse: tensor %q has %d values, want %d", name, len(t.Data), n)
	}
	if err := concept.CheckFinite(t.Data); err != nil {
		return nil, fmt.Errorf("dse: tensor %q: %w", name, err)
	}
	return t.Data, nil
}

// ID identifies the model's content (see models.Bundle.ID).
func (m *Model) ID() string { return concept.ModelID(m) }

// PayloadEncoder returns the index-time encoder of document embeddings Φ(d)
// under the payload name (default "dse").
func (m *Model) PayloadEncoder(name string) concept.PayloadEncoder {
	return concept.EncoderFor(name, Method, m)
}

// Clone returns a deep copy of the model, so a pretrained network can be
// fine-tuned several times.
func (m *Model) Clone() *Model {
	c := *m
	c.Config.Hidden = append([]int(nil), m.Config.Hidden...)
	c.layers = m.cloneLayers()
	return &c
}
