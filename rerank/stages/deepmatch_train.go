package stages

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/semrank/semrank/models/deepmatch"
	"github.com/semrank/semrank/rerank"
)

func init() {
	for _, method := range []string{deepmatch.MethodDeepMatch, deepmatch.MethodBilinear, deepmatch.MethodSiamese} {
		rerank.RegisterTrainer(method, func(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
			return fitDeepMatch(ctx, method, spec, in)
		}, matchOptions()...)
	}
}

var (
	allMatchers = []string{deepmatch.MethodDeepMatch, deepmatch.MethodBilinear, deepmatch.MethodSiamese}
	deepOnly    = []string{deepmatch.MethodDeepMatch}
)

// matchIntOptions are the integer training options of the matching stages:
// the least value each takes, the methods it applies to, and the
// deepmatch.Config field it sets.
var matchIntOptions = map[string]struct {
	min     int
	methods []string
	field   func(*deepmatch.Config) *int
}{
	"epochs":         {1, allMatchers, func(c *deepmatch.Config) *int { return &c.Epochs }},
	"patience":       {0, allMatchers, func(c *deepmatch.Config) *int { return &c.Patience }},
	"batch":          {1, allMatchers, func(c *deepmatch.Config) *int { return &c.Batch }},
	"min_df":         {1, allMatchers, func(c *deepmatch.Config) *int { return &c.MinDF }},
	"max_vocab":      {1, allMatchers, func(c *deepmatch.Config) *int { return &c.MaxVocab }},
	"neg_same":       {0, allMatchers, func(c *deepmatch.Config) *int { return &c.NegSameQuery }},
	"neg_random":     {0, allMatchers, func(c *deepmatch.Config) *int { return &c.NegRandom }},
	"lda_iterations": {1, deepOnly, func(c *deepmatch.Config) *int { return &c.LDAIterations }},
	"patch_words":    {1, deepOnly, func(c *deepmatch.Config) *int { return &c.PatchWords }},
	"min_children":   {1, deepOnly, func(c *deepmatch.Config) *int { return &c.MinChildren }},
	"rank":           {1, deepOnly, func(c *deepmatch.Config) *int { return &c.Rank }},
	"committee":      {1, deepOnly, func(c *deepmatch.Config) *int { return &c.Committee }},
	"dim":            {1, []string{deepmatch.MethodBilinear, deepmatch.MethodSiamese}, func(c *deepmatch.Config) *int { return &c.Dim }},
	"hidden":         {1, []string{deepmatch.MethodSiamese}, func(c *deepmatch.Config) *int { return &c.Hidden }},
}

// matchFloatOptions are the real-valued training options (all methods):
// whether 0 is allowed (else the value must be positive) and the field.
var matchFloatOptions = map[string]struct {
	zeroOK bool
	field  func(*deepmatch.Config) *float64
}{
	"lr":     {false, func(c *deepmatch.Config) *float64 { return &c.LearningRate }},
	"l2":     {true, func(c *deepmatch.Config) *float64 { return &c.L2 }},
	"margin": {true, func(c *deepmatch.Config) *float64 { return &c.Margin }},
	"init":   {false, func(c *deepmatch.Config) *float64 { return &c.Init }},
}

// matchListOptions are the DeepMatch options that take a list of positive
// integers.
var matchListOptions = map[string]func(*deepmatch.Config) *[]int{
	"resolutions": func(c *deepmatch.Config) *[]int { return &c.Resolutions },
	"neurons":     func(c *deepmatch.Config) *[]int { return &c.Neurons },
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

// matchOptions returns the training options of the matching stages, sorted.
func matchOptions() []string {
	known := []string{"meta"}
	for _, names := range [][]string{
		slices.Collect(maps.Keys(matchIntOptions)),
		slices.Collect(maps.Keys(matchFloatOptions)),
		slices.Collect(maps.Keys(matchListOptions)),
	} {
		known = append(known, names...)
	}
	slices.Sort(known)
	return known
}

// matchConfig returns the training config spec's options ask for.
func matchConfig(method string, spec rerank.StageSpec, seed uint64) (deepmatch.Config, error) {
	cfg := deepmatch.DefaultConfig(method)
	cfg.Seed = max(seed, 1)
	known := matchOptions()
	for _, name := range slices.Sorted(maps.Keys(spec.Options)) {
		if !slices.Contains(known, name) {
			return cfg, fmt.Errorf("option %s: unknown for stage type %s (known: %s)", name, method, strings.Join(known, ", "))
		}
		o, isInt := matchIntOptions[name]
		_, isList := matchListOptions[name]
		if (isInt && !slices.Contains(o.methods, method)) || (isList && method != deepmatch.MethodDeepMatch) {
			methods := deepOnly
			if isInt {
				methods = o.methods
			}
			return cfg, fmt.Errorf("option %s: applies to %s only, not to %s", name, strings.Join(methods, " and "), method)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(matchIntOptions)) {
		o := matchIntOptions[name]
		dst := o.field(&cfg)
		v, err := spec.Int(name, *dst)
		if err != nil {
			return cfg, err
		}
		if v < o.min {
			return cfg, fmt.Errorf("option %s: want ≥ %d, got %d", name, o.min, v)
		}
		*dst = v
	}
	if cfg.NegSameQuery+cfg.NegRandom == 0 {
		return cfg, fmt.Errorf("options neg_same and neg_random: both 0, want at least one negative per positive")
	}
	for _, name := range slices.Sorted(maps.Keys(matchFloatOptions)) {
		o := matchFloatOptions[name]
		dst := o.field(&cfg)
		v, err := spec.Float(name, *dst)
		if err != nil {
			return cfg, err
		}
		if ok := v > 0 || (v == 0 && o.zeroOK); !ok || math.IsInf(v, 0) {
			want := "> 0"
			if o.zeroOK {
				want = "≥ 0"
			}
			return cfg, fmt.Errorf("option %s: want %s, got %g", name, want, v)
		}
		*dst = v
	}
	for _, name := range slices.Sorted(maps.Keys(matchListOptions)) {
		dst := matchListOptions[name](&cfg)
		v, err := intList(spec, name, *dst)
		if err != nil {
			return cfg, err
		}
		*dst = v
	}
	var err error
	if cfg.Meta, err = spec.Bool("meta", cfg.Meta); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// intList returns option name as a non-empty list of positive integers, or
// def when absent. A pipeline file gives a list ([20, 50, 100]); a single
// number is a list of one.
func intList(spec rerank.StageSpec, name string, def []int) ([]int, error) {
	v, ok := spec.Options[name]
	if !ok {
		return def, nil
	}
	var items []any
	switch t := v.(type) {
	case []any:
		items = t
	case []int:
		for _, n := range t {
			items = append(items, n)
		}
	case []float64:
		for _, f := range t {
			items = append(items, f)
		}
	case int, float64:
		items = []any{t}
	default:
		return nil, fmt.Errorf("option %s: want a list of positive integers, got %v", name, v)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("option %s: empty list", name)
	}
	out := make([]int, len(items))
	for i, it := range items {
		n, err := rerank.StageSpec{Options: map[string]any{name: it}}.Int(name, 0)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("option %s: want a list of positive integers, got %v", name, v)
		}
		out[i] = n
	}
	return out, nil
}
