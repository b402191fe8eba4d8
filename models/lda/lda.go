// Package lda fits latent Dirichlet allocation by collapsed Gibbs sampling
// (Griffiths and Steyvers, 2004) over joint documents whose two sides use
// separate vocabularies.
//
// A joint document pairs two texts from different domains — a question and
// an answer, a query and a candidate — and, following the multilingual
// latent semantic indexing of Littman et al. that DeepMatch (Lu and Li, 2013)
// builds on, puts the words of both sides into one bag while keeping a
// separate virtual vocabulary for each side: "hotel" in a question is a
// different word from "hotel" in an answer. A topic is then a distribution
// over the union of the two vocabularies, so it captures both within-side
// and cross-side co-occurrence. Fitting the same corpus with several numbers
// of topics gives topic sets at several resolutions (FitResolutions).
//
// Choices the papers leave open:
//   - Symmetric Dirichlet priors: Alpha defaults to 50/K and Beta to 0.01,
//     the values Griffiths and Steyvers recommend.
//   - The estimate of a topic's word distribution is the posterior mean from
//     the final Gibbs state (no averaging over samples).
//   - The sampler runs single-threaded with a seeded generator, so a fit is
//     reproducible from its Config.
package lda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Side selects one of the two vocabularies of a joint document.
type Side int

const (
	X Side = iota // the first side (e.g. the question)
	Y             // the second side (e.g. the answer)
)

func (s Side) String() string {
	if s == X {
		return "x"
	}
	return "y"
}

// Doc is one joint document: word ids of each side, repeats allowed. X ids
// index the X vocabulary and Y ids the Y vocabulary.
type Doc struct {
	X, Y []int
}

// Corpus is a set of joint documents over vocabularies of sizes VX and VY.
type Corpus struct {
	Docs   []Doc
	VX, VY int
}

// Config controls a fit.
type Config struct {
	Topics     int     `json:"topics"`
	Alpha      float64 `json:"alpha,omitempty"` // document–topic prior; 0 means 50/Topics
	Beta       float64 `json:"beta,omitempty"`  // topic–word prior; 0 means 0.01
	Iterations int     `json:"iterations"`      // Gibbs sweeps over the corpus
	Seed       uint64  `json:"seed"`
}

func (c Config) withDefaults() Config {
	if c.Alpha == 0 && c.Topics > 0 {
		c.Alpha = 50 / float64(c.Topics)
	}
	if c.Beta == 0 {
		c.Beta = 0.01
	}
	if c.Iterations == 0 {
		c.Iterations = 200
	}
	return c
}

// Model is a fitted topic model: for each topic a distribution over the
// joint vocabulary, stored split by side.
type Model struct {
	Topics int
	VX, VY int
	// PhiX[k][w] = p(x-word w | topic k); PhiY likewise. Together a row
	// of PhiX and the matching row of PhiY sum to one.
	PhiX, PhiY [][]float64
	// LogLik is the log-likelihood of the words given the point estimates
	// of the state, recorded every 10 sweeps and after the last (for
	// convergence checks).
	LogLik []float64
}

// Validate checks the corpus's word ids against its vocabulary sizes.
func (c Corpus) Validate() error {
	if c.VX <= 0 || c.VY < 0 {
		return fmt.Errorf("lda: vocabulary sizes %d and %d must be positive", c.VX, c.VY)
	}
	tokens := 0
	for i, d := range c.Docs {
		for _, w := range d.X {
			if w < 0 || w >= c.VX {
				return fmt.Errorf("lda: document %d: x word id %d outside vocabulary of %d", i, w, c.VX)
			}
		}
		for _, w := range d.Y {
			if w < 0 || w >= c.VY {
				return fmt.Errorf("lda: document %d: y word id %d outside vocabulary of %d", i, w, c.VY)
			}
		}
		tokens += len(d.X) + len(d.Y)
	}
	if tokens == 0 {
		return errors.New("lda: corpus has no words")
	}
	return nil
}

// Fit runs collapsed Gibbs sampling on c. progress, when non-nil, is called
// after each sweep with the sweep number (1-based). Fit stops early with
// ctx's error when ctx is cancelled.
func Fit(ctx context.Context, c Corpus, cfg Config, progress func(sweep int)) (*Model, error) {
	cfg = cfg.withDefaults()
	if cfg.Topics < 1 {
		return nil, fmt.Errorf("lda: %d topics, need at least 1", cfg.Topics)
	}
	if cfg.Iterations < 0 {
		// No sweep would leave the model without its Phi tables.
		return nil, fmt.Errorf("lda: %d iterations, need at least 1", cfg.Iterations)
	}
	// Written so that NaN fails: a NaN or infinite prior makes every
	// sampling weight NaN, and the sampler then puts every word in the
	// last topic.
	if !(cfg.Alpha >= 0 && cfg.Beta > 0) || math.IsInf(cfg.Alpha, 0) || math.IsInf(cfg.Beta, 0) {
		return nil, fmt.Errorf("lda: priors alpha=%g beta=%g must be positive and finite", cfg.Alpha, cfg.Beta)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	K, V := cfg.Topics, c.VX+c.VY
	// Joint word ids: x words keep their ids, y words are offset by VX.
	docs := make([][]int32, len(c.Docs))
	for i, d := range c.Docs {
		w := make([]int32, 0, len(d.X)+len(d.Y))
		for _, x := range d.X {
			w = append(w, int32(x))
		}
		for _, y := range d.Y {
			w = append(w, int32(c.VX+y))
		}
		docs[i] = w
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x1da))
	nkw := make([]int32, K*V) // word-major: nkw[w*K+k], so a word's topic counts are contiguous
	nk := make([]int32, K)
	ndk := make([][]int32, len(docs))
	z := make([][]int32, len(docs))
	for d, ws := range docs {
		ndk[d] = make([]int32, K)
		z[d] = make([]int32, len(ws))
		for i, w := range ws {
			k := int32(rng.IntN(K))
			z[d][i] = k
			ndk[d][k]++
			nkw[int(w)*K+int(k)]++
			nk[k]++
		}
	}
	p := make([]float64, K)
	vBeta := float64(V) * cfg.Beta
	inv := make([]float64, K) // 1/(n_k + Vβ), kept current to avoid a division per topic
	for k := range K {
		inv[k] = 1 / (float64(nk[k]) + vBeta)
	}
	m := &Model{Topics: K, VX: c.VX, VY: c.VY}
	for sweep := 1; sweep <= cfg.Iterations; sweep++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for d, ws := range docs {
			nd := ndk[d]
			for i, w := range ws {
				k := z[d][i]
				row := nkw[int(w)*K : int(w)*K+K]
				nd[k]--
				row[k]--
				nk[k]--
				inv[k] = 1 / (float64(nk[k]) + vBeta)
				var total float64
				for t := 0; t < K; t++ {
					total += (float64(nd[t]) + cfg.Alpha) * (float64(row[t]) + cfg.Beta) * inv[t]
					p[t] = total
				}
				u := rng.Float64() * total
				k = int32(sort.SearchFloat64s(p, u))
				if int(k) >= K { // u == total only through rounding
					k = int32(K - 1)
				}
				z[d][i] = k
				nd[k]++
				row[k]++
				nk[k]++
				inv[k] = 1 / (float64(nk[k]) + vBeta)
			}
		}
		if sweep%10 == 0 || sweep == cfg.Iterations {
			m.estimate(nkw, nk, cfg.Beta)
			m.LogLik = append(m.LogLik, m.logLik(docs, ndk, cfg.Alpha))
		}
		if progress != nil {
			progress(sweep)
		}
	}
	return m, nil
}

// estimate sets Phi to the posterior mean given the counts.
func (m *Model) estimate(nkw, nk []int32, beta float64) {
	K, V := m.Topics, m.VX+m.VY
	if m.PhiX == nil {
		m.PhiX, m.PhiY = make([][]float64, K), make([][]float64, K)
		for k := range K {
			m.PhiX[k], m.PhiY[k] = make([]float64, m.VX), make([]float64, m.VY)
		}
	}
	for k := range K {
		den := float64(nk[k]) + float64(V)*beta
		for w := range m.VX {
			m.PhiX[k][w] = (float64(nkw[w*K+k]) + beta) / den
		}
		for w := range m.VY {
			m.PhiY[k][w] = (float64(nkw[(m.VX+w)*K+k]) + beta) / den
		}
	}
}

func (m *Model) logLik(docs [][]int32, ndk [][]int32, alpha float64) float64 {
	K := m.Topics
	var ll float64
	for d, ws := range docs {
		n := float64(len(ws)) + float64(K)*alpha
		for _, w := range ws {
			var p float64
			for k := range K {
				p += (float64(ndk[d][k]) + alpha) / n * m.phi(int(w), k)
			}
			ll += math.Log(p)
		}
	}
	return ll
}

// phi returns p(joint word w | topic k).
func (m *Model) phi(w, k int) float64 {
	if w < m.VX {
		return m.PhiX[k][w]
	}
	return m.PhiY[k][w-m.VX]
}

// Phi returns topic k's probabilities of the words of side s.
func (m *Model) Phi(k int, s Side) []float64 {
	if s == X {
		return m.PhiX[k]
	}
	return m.PhiY[k]
}

// TopWords returns topic k's n most probable words of side s, most
// probable first (ties broken by word id).
func (m *Model) TopWords(k int, s Side, n int) []int {
	phi := m.Phi(k, s)
	ids := make([]int, len(phi))
	for i := range ids {
		ids[i] = i
	}
	sort.SliceStable(ids, func(a, b int) bool { return phi[ids[a]] > phi[ids[b]] })
	if n < len(ids) {
		ids = ids[:n]
	}
	return ids
}

// FitResolutions fits one model per number of topics in topics, with cfg's
// other settings, and returns them in the order given.
func FitResolutions(ctx context.Context, c Corpus, cfg Config, topics []int, progress func(model, sweep int)) ([]*Model, error) {
	if len(topics) == 0 {
		return nil, errors.New("lda: no resolutions given")
	}
	out := make([]*Model, len(topics))
	for i, k := range topics {
		rc := cfg
		rc.Topics = k
		rc.Alpha = cfg.Alpha // 0 stays 0 so that each resolution gets 50/K
		rc.Seed = cfg.Seed + uint64(i)
		var cb func(int)
		if progress != nil {
			cb = func(s int) { progress(i, s) }
		}
		m, err := Fit(ctx, c, rc, cb)
		if err != nil {
			return nil, fmt.Errorf("lda: %d topics: %w", k, err)
		}
		out[i] = m
	}
	return out, nil
}
