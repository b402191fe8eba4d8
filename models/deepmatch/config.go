package deepmatch

import (
	"fmt"
	"math"
	"slices"
)

// Methods this package trains.
const (
	MethodDeepMatch = "deepmatch"
	MethodBilinear  = "bilinear"
	MethodSiamese   = "siamese"
)

// Config holds every setting of a training run; it is saved in the model.
type Config struct {
	Method string `json:"method"` // deepmatch, bilinear or siamese

	// Inputs.
	MinDF    int  `json:"min_df"`    // a word must occur in this many texts of its side
	MaxVocab int  `json:"max_vocab"` // per side
	Meta     bool `json:"meta"`      // add candidate meta tokens (length, asker; see CandidateTokens)

	// DeepMatch architecture.
	Resolutions   []int   `json:"resolutions,omitempty"`    // numbers of topics, one patch level each
	LDAIterations int     `json:"lda_iterations,omitempty"` // Gibbs sweeps per resolution
	PatchWords    int     `json:"patch_words,omitempty"`    // at most this many words per patch side
	MinChildren   int     `json:"min_children,omitempty"`   // m_ℓ of the DAG
	Neurons       []int   `json:"neurons,omitempty"`        // per patch, finest level first; one value applies to all
	Rank          int     `json:"rank,omitempty"`           // D_p of the bilinear filters
	Committee     int     `json:"committee,omitempty"`      // committee-layer neurons
	Init          float64 `json:"init"`                     // scale of random initial first-layer weights

	// Baselines.
	Dim    int `json:"dim,omitempty"`    // latent dimension (bilinear and Siamese)
	Hidden int `json:"hidden,omitempty"` // Siamese hidden units per tower

	// Training.
	Margin       float64 `json:"margin"`
	Batch        int     `json:"batch"`
	LearningRate float64 `json:"learning_rate"`
	L2           float64 `json:"l2"`
	Epochs       int     `json:"epochs"`
	Patience     int     `json:"patience"`       // stop after this many epochs without a better dev MAP
	NegSameQuery int     `json:"neg_same_query"` // negatives per positive drawn from the query's other candidates
	NegRandom    int     `json:"neg_random"`     // negatives per positive drawn from random documents
	Seed         uint64  `json:"seed"`
}

// DefaultConfig returns settings sized for the SemEval data on a small
// machine — a few minutes of training at most — with the learning rate and
// ℓ2 weight chosen per method on SemEval subtask A (train → dev MAP): the
// vocabulary-sized baselines overfit within an epoch unless strongly
// regularised.
func DefaultConfig(method string) Config {
	c := Config{
		Method: method, MinDF: 2, MaxVocab: 20000, Meta: true,
		Resolutions: []int{20, 50, 100}, LDAIterations: 60, PatchWords: 60, MinChildren: 3,
		Neurons: []int{2}, Rank: 4, Committee: 8, Init: 0.3,
		Dim: 32, Hidden: 64,
		Margin: 0.1, Batch: 50, LearningRate: 0.2, L2: 1e-4,
		Epochs: 25, Patience: 5, NegSameQuery: 1, NegRandom: 1, Seed: 1,
	}
	switch method {
	case MethodBilinear:
		c.LearningRate, c.L2 = 0.05, 1e-2
	case MethodSiamese:
		c.LearningRate, c.L2 = 0.05, 3e-2
	}
	return c
}

// levels returns the resolutions from finest (most topics) to coarsest,
// the order of the patch-induced layers.
func (c Config) levels() []int {
	r := slices.Clone(c.Resolutions)
	slices.Sort(r)
	slices.Reverse(r)
	return slices.Compact(r)
}

// shape returns the network shape for the configured levels.
func (c Config) shape() Shape {
	n := len(c.levels())
	ks := make([]int, n)
	for i := range ks {
		ks[i] = c.Neurons[min(i, len(c.Neurons)-1)]
	}
	return Shape{Neurons: ks, Rank: c.Rank, Committee: c.Committee}
}

// Validate reports the first setting that cannot work.
func (c Config) Validate() error {
	switch c.Method {
	case MethodDeepMatch:
		if len(c.Resolutions) == 0 {
			return fmt.Errorf("deepmatch: no topic resolutions")
		}
		for _, r := range c.Resolutions {
			if r < 1 {
				return fmt.Errorf("deepmatch: resolution %d topics", r)
			}
		}
		if len(c.Neurons) == 0 || c.Rank < 1 || c.Committee < 1 || c.PatchWords < 1 || c.LDAIterations < 1 {
			return fmt.Errorf("deepmatch: neurons %v, rank %d, committee %d, patch words %d and LDA iterations %d must be positive",
				c.Neurons, c.Rank, c.Committee, c.PatchWords, c.LDAIterations)
		}
	case MethodBilinear, MethodSiamese:
		if c.Dim < 1 || (c.Method == MethodSiamese && c.Hidden < 1) {
			return fmt.Errorf("deepmatch: %s needs positive dim (and hidden), got %d, %d", c.Method, c.Dim, c.Hidden)
		}
	default:
		return fmt.Errorf("deepmatch: unknown method %q (want deepmatch, bilinear or siamese)", c.Method)
	}
	// Written so that NaN fails: a NaN or infinite setting makes every
	// weight NaN, or trains a model whose config cannot be saved.
	if c.Batch < 1 || c.Epochs < 1 || !(c.LearningRate > 0) || !(c.L2 >= 0) || !(c.Margin >= 0) ||
		math.IsInf(c.LearningRate, 0) || math.IsInf(c.L2, 0) || math.IsInf(c.Margin, 0) {
		return fmt.Errorf("deepmatch: batch %d, epochs %d, learning rate %g, l2 %g, margin %g out of range",
			c.Batch, c.Epochs, c.LearningRate, c.L2, c.Margin)
	}
	if math.IsNaN(c.Init) || math.IsInf(c.Init, 0) {
		return fmt.Errorf("deepmatch: initial weight scale %g: want a finite number", c.Init)
	}
	if c.NegSameQuery < 0 || c.NegRandom < 0 || c.NegSameQuery+c.NegRandom == 0 {
		return fmt.Errorf("deepmatch: need at least one negative per positive")
	}
	return nil
}
