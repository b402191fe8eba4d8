// Package quality learns how good a candidate is as an answer from its own
// words, whatever the question: an L2-regularised logistic regression over
// the word unigrams and bigrams (and optionally character n-grams) of
// judged candidates, trained with L-BFGS.
//
// In community question answering most comments are not answers at all:
// they thank, joke, ask back or talk to another user. Which words mark such
// chat ("thanks", "lol", "?", "@name") and which mark an answer ("you can",
// "visit", "contact", a number) hardly depends on the question, so a
// question-independent prior learned from a few thousand judged comments
// is one of the strongest single signals in SemEval-2016 subtask A — the
// question–answer matchers (DeepMatch, bilinear) say whether a comment is
// about the question, this model whether it is an answer at all.
//
// Choices made here:
//
//   - Tokens keep stop words and punctuation that carries intent ("?", "!",
//     ":)"): unlike retrieval, classification of chat needs them. Links
//     become the token <url>, numbers <num>, @-mentions <at>.
//   - A text is the set of its features (binary), scaled to unit length, so
//     long and short comments weigh alike.
//   - Features seen in fewer than MinCount training texts are dropped.
package quality

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gonum.org/v1/gonum/optimize"

	"github.com/semrank/semrank/models"
)

// Method is the model-bundle method name; Version the tensor layout.
const (
	Method  = "quality"
	Version = 1
)

// TokensVersion is the version of the behaviour of Tokens and of the
// feature strings built from them. The quality model does not use a
// semrank analyzer, so its models record this instead (as
// models.Manifest.Analyzer, through TokensID): bump it whenever the tokens
// or features for some input change, and models trained before are refused
// with a request to retrain rather than silently missing their features.
// TestTokensVersionPinsTokens fails when they change and it does not.
const TokensVersion = 1

// TokensID identifies the behaviour of Tokens, e.g. "quality_tokens/1".
func TokensID() string { return "quality_tokens/" + strconv.Itoa(TokensVersion) }

// Config controls training.
type Config struct {
	MinCount      int     `json:"min_count"`      // minimum document frequency of a feature (default 2)
	Bigrams       bool    `json:"bigrams"`        // add word bigrams to unigrams
	Chars         bool    `json:"chars"`          // add character 3- to 5-grams
	L2            float64 `json:"l2"`             // L2 penalty per training example (default 3e-4)
	MaxIterations int     `json:"max_iterations"` // L-BFGS iterations (default 200)
	// Context names the context features (Example.Context) the model was
	// trained with, so that whoever scores with it computes the same ones.
	Context []string `json:"context,omitempty"`
}

func (c Config) withDefaults() Config {
	if c.MinCount <= 0 {
		c.MinCount = 2
	}
	if c.L2 <= 0 {
		c.L2 = 3e-4
	}
	if c.MaxIterations <= 0 {
		c.MaxIterations = 200
	}
	return c
}

// Model is a trained quality classifier.
type Model struct {
	Config   Config
	Features []string // sorted feature strings
	W        []float64
	Bias     float64
	// Tokenizer identifies the behaviour of Tokens the features came
	// from: TokensID() for a trained model; for a loaded one, what its
	// bundle recorded ("" when saved before it was recorded), kept so that
	// re-saving it neither claims a version nobody checked nor changes its
	// ID, which indexes record for its payloads.
	Tokenizer string

	index map[string]int
}

// Example is one judged text.
type Example struct {
	Text string
	// Context holds features the text itself does not show, used verbatim
	// (e.g. "ctx:asker" for a comment by the question's author).
	Context []string
	Good    bool
}

// Train fits a model to examples. Both classes must be present.
func Train(ctx context.Context, examples []Example, cfg Config) (*Model, error) {
	if cfg.L2 < 0 || math.IsNaN(cfg.L2) || math.IsInf(cfg.L2, 0) {
		return nil, fmt.Errorf("quality: l2 must be a finite number ≥ 0, not %v", cfg.L2)
	}
	cfg = cfg.withDefaults()
	var pos, neg int
	for _, e := range examples {
		if e.Good {
			pos++
		} else {
			neg++
		}
	}
	if pos == 0 || neg == 0 {
		return nil, fmt.Errorf("quality: training needs good and bad examples (have %d good, %d bad)", pos, neg)
	}
	feats := make([][]string, len(examples))
	df := map[string]int{}
	for i, e := range examples {
		// Each feature counts once, as Score counts it, however often the
		// context repeats it or the text has it already.
		feats[i] = Features(e.Text, cfg.Bigrams, cfg.Chars, e.Context...)
		for _, f := range feats[i] {
			df[f]++
		}
	}
	var vocab []string
	for f, n := range df {
		if n >= cfg.MinCount {
			vocab = append(vocab, f)
		}
	}
	if len(vocab) == 0 {
		return nil, fmt.Errorf("quality: no feature occurs in %d or more training texts", cfg.MinCount)
	}
	slices.Sort(vocab)
	m := &Model{Config: cfg, Features: vocab, Tokenizer: TokensID()}
	m.buildIndex()

	xs := make([]sparse, len(examples))
	ys := make([]float64, len(examples))
	for i, e := range examples {
		xs[i] = m.vector(feats[i])
		if e.Good {
			ys[i] = 1
		}
	}
	if err := m.fit(ctx, xs, ys); err != nil {
		return nil, err
	}
	return m, nil
}

// sparse is a unit-length binary feature vector: the feature indices and
// the common value 1/√n.
type sparse struct {
	idx []int
	val float64
}

func (m *Model) vector(feats []string) sparse {
	var s sparse
	for _, f := range feats {
		if j, ok := m.index[f]; ok {
			s.idx = append(s.idx, j)
		}
	}
	if len(s.idx) > 0 {
		s.val = 1 / math.Sqrt(float64(len(s.idx)))
	}
	return s
}

func (m *Model) buildIndex() {
	m.index = make(map[string]int, len(m.Features))
	for i, f := range m.Features {
		m.index[f] = i
	}
}

// fit minimises the mean logistic loss plus L2/2·‖w‖² (the bias is not
// penalised) with L-BFGS.
func (m *Model) fit(ctx context.Context, xs []sparse, ys []float64) error {
	d := len(m.Features)
	problem := objective(xs, ys, d, m.Config.L2)
	settings := &optimize.Settings{
		MajorIterations:   m.Config.MaxIterations,
		GradientThreshold: 1e-7,
		Converger:         &optimize.FunctionConverge{Absolute: 1e-10, Relative: 1e-8, Iterations: 10},
		Recorder:          ctxRecorder{ctx},
	}
	res, err := optimize.Minimize(problem, make([]float64, d+1), settings, &optimize.LBFGS{})
	if err != nil && !errors.Is(err, errCancelled) && res == nil {
		return fmt.Errorf("quality: training: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if res == nil {
		return fmt.Errorf("quality: training: %w", err)
	}
	for _, v := range res.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("quality: training diverged (non-finite weight)")
		}
	}
	m.W = res.X[:d:d]
	m.Bias = res.X[d]
	return nil
}

// objective is the training objective over parameters p = (w₁…w_d, bias):
// the mean logistic loss of the examples plus l2/2·‖w‖², the bias not
// penalised, with its gradient.
func objective(xs []sparse, ys []float64, d int, l2 float64) optimize.Problem {
	n := float64(len(xs))
	margin := func(p []float64, x sparse) float64 {
		z := p[d]
		for _, j := range x.idx {
			z += p[j] * x.val
		}
		return z
	}
	return optimize.Problem{
		Func: func(p []float64) float64 {
			var loss float64
			for i, x := range xs {
				z := margin(p, x)
				// log(1+e^z) − y·z, computed without overflow.
				loss += softplus(z) - ys[i]*z
			}
			var reg float64
			for _, w := range p[:d] {
				reg += w * w
			}
			return loss/n + l2/2*reg
		},
		Grad: func(g, p []float64) {
			clear(g)
			for i, x := range xs {
				r := (sigmoid(margin(p, x)) - ys[i]) / n
				for _, j := range x.idx {
					g[j] += r * x.val
				}
				g[d] += r
			}
			for j, w := range p[:d] {
				g[j] += l2 * w
			}
		},
	}
}

var errCancelled = errors.New("quality: training cancelled")

// ctxRecorder stops L-BFGS when the context is cancelled.
type ctxRecorder struct{ ctx context.Context }

func (r ctxRecorder) Init() error { return nil }
func (r ctxRecorder) Record(*optimize.Location, optimize.Operation, *optimize.Stats) error {
	if r.ctx.Err() != nil {
		return errCancelled
	}
	return nil
}

// Score returns the log-odds that text, with the given context features,
// is a good answer. It computes the same features as Features but looks
// each one up in the vocabulary from a reused buffer instead of building
// and deduplicating strings, which makes it several times faster on
// forum comments (BenchmarkScore).
func (m *Model) Score(text string, context ...string) float64 {
	ids := make([]int, 0, 64)
	var buf []byte
	look := func(b []byte) {
		if j, ok := m.index[string(b)]; ok {
			ids = append(ids, j)
		}
	}
	toks := Tokens(text)
	for i, t := range toks {
		look(append(buf[:0], t...))
		if m.Config.Bigrams && i > 0 {
			buf = append(append(append(buf[:0], toks[i-1]...), ' '), t...)
			look(buf)
		}
	}
	if m.Config.Chars {
		r := []rune(" " + strings.Join(toks, " ") + " ")
		for n := 3; n <= 5; n++ {
			for i := 0; i+n <= len(r); i++ {
				buf = append(buf[:0], '#')
				for _, c := range r[i : i+n] {
					buf = utf8.AppendRune(buf, c)
				}
				look(buf)
			}
		}
	}
	for _, c := range context {
		look(append(buf[:0], c...))
	}
	// A feature counts once, however often it occurs (as in training).
	slices.Sort(ids)
	ids = slices.Compact(ids)
	z := m.Bias
	if len(ids) == 0 {
		return z
	}
	var sum float64
	for _, j := range ids {
		sum += m.W[j]
	}
	return z + sum/math.Sqrt(float64(len(ids)))
}

func softplus(z float64) float64 {
	if z > 30 {
		return z
	}
	return math.Log1p(math.Exp(z))
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// Bundle returns the model in the shared bundle format.
func (m *Model) Bundle() (*models.Bundle, error) {
	if len(m.W) != len(m.Features) || len(m.Features) == 0 {
		return nil, fmt.Errorf("quality: incomplete model (%d weights, %d features)", len(m.W), len(m.Features))
	}
	b := models.New(Method, Version)
	if err := b.SetConfig(m.Config); err != nil {
		return nil, err
	}
	b.AddStrings("features", m.Features)
	b.AddTensor("w", []int{len(m.W) + 1}, append(slices.Clone(m.W), m.Bias))
	b.Manifest.VocabHash = models.HashStrings(m.Features)
	b.Manifest.Analyzer = m.Tokenizer
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
	var err error
	// Features from another version of Tokens would not match the text.
	if err := b.CheckAnalyzer(TokensID()); err != nil {
		return nil, err
	}
	m := &Model{Tokenizer: b.Manifest.Analyzer}
	if err := b.Config(&m.Config); err != nil {
		return nil, err
	}
	if m.Features, err = b.Strings("features"); err != nil {
		return nil, err
	}
	if err := b.CheckVocab(models.HashStrings(m.Features)); err != nil {
		return nil, err
	}
	t, err := b.Tensor("w", 1)
	if err != nil {
		return nil, err
	}
	if len(t.Data) != len(m.Features)+1 {
		return nil, fmt.Errorf("%d weights for %d features", len(t.Data), len(m.Features))
	}
	for i := 1; i < len(m.Features); i++ {
		if m.Features[i] <= m.Features[i-1] {
			return nil, fmt.Errorf("feature list is not sorted and unique at %q", m.Features[i])
		}
	}
	for _, v := range t.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("non-finite weight")
		}
	}
	m.W = t.Data[:len(m.Features):len(m.Features)]
	m.Bias = t.Data[len(m.Features)]
	m.buildIndex()
	return m, nil
}
