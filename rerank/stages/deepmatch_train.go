package stages

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gopkg.in/yaml.v3"

	"github.com/semrank/semrank/models/deepmatch"
	"github.com/semrank/semrank/rerank"
)

func init() {
	for _, method := range []string{deepmatch.MethodDeepMatch, deepmatch.MethodBilinear, deepmatch.MethodSiamese} {
		rerank.RegisterTrainer(method, func(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
			return fitDeepMatch(ctx, method, spec, in)
		})
	}
}

// MatchOptions are the training options every matching stage type
// (deepmatch, bilinear, siamese) takes; see fitDeepMatch.
type MatchOptions struct {
	Epochs    int     `yaml:"epochs"`
	Patience  int     `yaml:"patience"`
	Batch     int     `yaml:"batch"`
	MinDF     int     `yaml:"min_df"`
	MaxVocab  int     `yaml:"max_vocab"`
	NegSame   int     `yaml:"neg_same"`
	NegRandom int     `yaml:"neg_random"`
	LR        float64 `yaml:"lr"`
	L2        float64 `yaml:"l2"`
	Margin    float64 `yaml:"margin"`
	Init      float64 `yaml:"init"`
	Meta      bool    `yaml:"meta"`
}

// DeepMatchOptions are the options of a deepmatch stage, its trainer's.
type DeepMatchOptions struct {
	MatchOptions  `yaml:",inline"`
	Resolutions   IntList `yaml:"resolutions"`
	Neurons       IntList `yaml:"neurons"`
	LDAIterations int     `yaml:"lda_iterations"`
	PatchWords    int     `yaml:"patch_words"`
	MinChildren   int     `yaml:"min_children"`
	Rank          int     `yaml:"rank"`
	Committee     int     `yaml:"committee"`
}

// BilinearOptions are the options of a bilinear stage, its trainer's.
type BilinearOptions struct {
	MatchOptions `yaml:",inline"`
	Dim          int `yaml:"dim"`
}

// SiameseOptions are the options of a siamese stage, its trainer's.
type SiameseOptions struct {
	BilinearOptions `yaml:",inline"`
	Hidden          int `yaml:"hidden"`
}

// matchOptions is the options struct of a matching stage type.
type matchOptions interface {
	// apply sets the training configuration's fields of its options.
	apply(c *deepmatch.Config)
}

// MatchOptionsFor returns the options struct of the matching stage type
// method (a *DeepMatchOptions, *BilinearOptions or *SiameseOptions)
// holding deepmatch.DefaultConfig(method)'s values.
func MatchOptionsFor(method string) any { return matchOptionsFor(method) }

func matchOptionsFor(method string) matchOptions {
	c := deepmatch.DefaultConfig(method)
	m := MatchOptions{Epochs: c.Epochs, Patience: c.Patience, Batch: c.Batch, MinDF: c.MinDF, MaxVocab: c.MaxVocab,
		NegSame: c.NegSameQuery, NegRandom: c.NegRandom, LR: c.LearningRate, L2: c.L2, Margin: c.Margin, Init: c.Init, Meta: c.Meta}
	switch method {
	case deepmatch.MethodDeepMatch:
		return &DeepMatchOptions{MatchOptions: m, Resolutions: c.Resolutions, Neurons: c.Neurons, LDAIterations: c.LDAIterations,
			PatchWords: c.PatchWords, MinChildren: c.MinChildren, Rank: c.Rank, Committee: c.Committee}
	case deepmatch.MethodBilinear:
		return &BilinearOptions{MatchOptions: m, Dim: c.Dim}
	}
	return &SiameseOptions{BilinearOptions: BilinearOptions{MatchOptions: m, Dim: c.Dim}, Hidden: c.Hidden}
}

func (o *MatchOptions) apply(c *deepmatch.Config) {
	c.Epochs, c.Patience, c.Batch, c.MinDF, c.MaxVocab = o.Epochs, o.Patience, o.Batch, o.MinDF, o.MaxVocab
	c.NegSameQuery, c.NegRandom, c.LearningRate, c.L2, c.Margin, c.Init, c.Meta = o.NegSame, o.NegRandom, o.LR, o.L2, o.Margin, o.Init, o.Meta
}

func (o *DeepMatchOptions) apply(c *deepmatch.Config) {
	o.MatchOptions.apply(c)
	c.Resolutions, c.Neurons, c.LDAIterations, c.PatchWords = o.Resolutions, o.Neurons, o.LDAIterations, o.PatchWords
	c.MinChildren, c.Rank, c.Committee = o.MinChildren, o.Rank, o.Committee
}

func (o *BilinearOptions) apply(c *deepmatch.Config) {
	o.MatchOptions.apply(c)
	c.Dim = o.Dim
}

func (o *SiameseOptions) apply(c *deepmatch.Config) {
	o.BilinearOptions.apply(c)
	c.Hidden = o.Hidden
}

// IntList is a non-empty list of positive integers; in YAML a list
// ([20, 50, 100]) or a single number, a list of one.
type IntList []int

// UnmarshalYAML reads a list of positive integers or one.
func (l *IntList) UnmarshalYAML(n *yaml.Node) error {
	items := n.Content
	if n.Kind != yaml.SequenceNode {
		items = []*yaml.Node{n}
	}
	if len(items) == 0 {
		return errors.New("empty list")
	}
	out := make(IntList, len(items))
	for i, it := range items {
		var f float64
		if (it.Tag != "!!int" && it.Tag != "!!float") || it.Decode(&f) != nil || f < 1 || f != math.Trunc(f) || f > math.MaxInt32 {
			var v any
			_ = n.Decode(&v)
			return fmt.Errorf("want a list of positive integers, got %v", v)
		}
		out[i] = int(f)
	}
	*l = out
	return nil
}

// matchIntMins are the least values of the matching stages' integer
// training options, and the deepmatch.Config fields they set.
var matchIntMins = []struct {
	name  string
	min   int
	field func(*deepmatch.Config) int
}{
	{"epochs", 1, func(c *deepmatch.Config) int { return c.Epochs }},
	{"patience", 0, func(c *deepmatch.Config) int { return c.Patience }},
	{"batch", 1, func(c *deepmatch.Config) int { return c.Batch }},
	{"min_df", 1, func(c *deepmatch.Config) int { return c.MinDF }},
	{"max_vocab", 1, func(c *deepmatch.Config) int { return c.MaxVocab }},
	{"neg_same", 0, func(c *deepmatch.Config) int { return c.NegSameQuery }},
	{"neg_random", 0, func(c *deepmatch.Config) int { return c.NegRandom }},
	{"lda_iterations", 1, func(c *deepmatch.Config) int { return c.LDAIterations }},
	{"patch_words", 1, func(c *deepmatch.Config) int { return c.PatchWords }},
	{"min_children", 1, func(c *deepmatch.Config) int { return c.MinChildren }},
	{"rank", 1, func(c *deepmatch.Config) int { return c.Rank }},
	{"committee", 1, func(c *deepmatch.Config) int { return c.Committee }},
	{"dim", 1, func(c *deepmatch.Config) int { return c.Dim }},
	{"hidden", 1, func(c *deepmatch.Config) int { return c.Hidden }},
}

// matchFloats are the real-valued training options: whether 0 is allowed
// (else the value must be positive) and the field.
var matchFloats = []struct {
	name   string
	zeroOK bool
	field  func(*deepmatch.Config) float64
}{
	{"init", false, func(c *deepmatch.Config) float64 { return c.Init }},
	{"l2", true, func(c *deepmatch.Config) float64 { return c.L2 }},
	{"lr", false, func(c *deepmatch.Config) float64 { return c.LearningRate }},
	{"margin", true, func(c *deepmatch.Config) float64 { return c.Margin }},
}

// fitDeepMatch trains a matching model of package deepmatch (DeepMatch or
// one of its bilinear and Siamese baselines). Defaults are
// deepmatch.DefaultConfig(method), tuned per method on SemEval subtask A;
// training runs on one core.
//
// Options, every method: epochs (most epochs, 25), patience (epochs without
// a better dev MAP before stopping, 5; 0 runs every epoch), lr (AdaGrad
// learning rate: deepmatch 0.2, bilinear and siamese 0.05), l2 (deepmatch
// 1e-4, bilinear 1e-2, siamese 3e-2), margin (0.1), init (initial weight
// scale, 0.3), batch (50), min_df (2), max_vocab (20000 per side),
// neg_same and neg_random (negatives per positive from the query's other
// candidates and from random documents, 1 each), meta (candidate meta
// tokens, true). DeepMatch: resolutions (topic numbers, one patch level
// each, a list, [20, 50, 100]), lda_iterations (60), patch_words (60),
// min_children (3), neurons (per patch, finest level first, a list, [2]),
// rank (4), committee (8). Bilinear and Siamese: dim (32); Siamese: hidden
// (64). An option the method does not read is an error, so a misspelt one
// is not silently ignored.
//
// The topic models are fitted on the training lists' joint documents (a
// query with its candidates, two vocabularies): DeepMatch links query words
// to candidate words, which unlabeled text (in.Text) cannot show, so it is
// not used. Early stopping watches in.Dev's judged candidate lists when
// in.Dev has them, else every tenth training query, held out. in.Seed (0
// counts as 1) seeds the topic models, the initial weights and the sampled
// triples.
func fitDeepMatch(ctx context.Context, method string, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
	cfg, err := matchConfig(method, spec, in.Seed)
	if err != nil {
		return spec, err
	}
	if err := needJudged(in); err != nil {
		return spec, err
	}
	train, err := deepmatch.FromDataset(in.Train)
	if err != nil {
		return spec, err
	}
	var dev []deepmatch.Query
	if in.Dev != nil && in.Dev.Qrels != nil && in.Dev.Candidates != nil {
		if dev, err = deepmatch.FromDataset(in.Dev); err != nil {
			return spec, err
		}
	}
	var progress func(deepmatch.Progress)
	if in.Progress != nil {
		steps := newSteps(in, cfg.Epochs)
		progress = func(p deepmatch.Progress) {
			if p.Epoch > 0 { // epoch 0: the topic models are fitted
				steps.step("epoch", p.Epoch, p.Loss, p.DevMAP)
			}
		}
	}
	m, err := deepmatch.Train(ctx, train, dev, cfg, progress)
	if err != nil {
		return spec, err
	}
	return saveModel(spec, in, method, m.Save)
}

// matchConfig returns the training config spec's options ask for.
func matchConfig(method string, spec rerank.StageSpec, seed uint64) (deepmatch.Config, error) {
	cfg := deepmatch.DefaultConfig(method)
	cfg.Seed = max(seed, 1)
	o := matchOptionsFor(method)
	if err := spec.DecodeOptions(o); err != nil {
		return cfg, err
	}
	o.apply(&cfg)
	for _, m := range matchIntMins {
		if v := m.field(&cfg); v < m.min {
			return cfg, fmt.Errorf("option %s: want ≥ %d, got %d", m.name, m.min, v)
		}
	}
	if cfg.NegSameQuery+cfg.NegRandom == 0 {
		return cfg, fmt.Errorf("options neg_same and neg_random: both 0, want at least one negative per positive")
	}
	for _, m := range matchFloats {
		if v := m.field(&cfg); !(v > 0 || (v == 0 && m.zeroOK)) || math.IsInf(v, 0) {
			want := "> 0"
			if m.zeroOK {
				want = "≥ 0"
			}
			return cfg, fmt.Errorf("option %s: want %s, got %g", m.name, want, v)
		}
	}
	return cfg, cfg.Validate()
}
