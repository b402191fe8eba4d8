package stages

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"

	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/dse"
	"github.com/semrank/semrank/models/lsa"
	"github.com/semrank/semrank/models/s2net"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterTrainer(lsa.Method, fitLSA)
	rerank.RegisterTrainer(s2net.Method, fitS2Net)
	rerank.RegisterTrainer(dse.Method, fitDSE)
}

// LSAOptions are the options of an lsa stage: the payload its vectors are
// stored under (default the stage's name), and its trainer's (see
// fitLSA).
type LSAOptions struct {
	Payload  string `yaml:"payload"`
	Dim      int    `yaml:"dim"`
	MaxTerms int    `yaml:"max_terms"`
}

// DefaultLSAOptions returns the options an lsa stage takes when its spec
// gives none.
func DefaultLSAOptions() LSAOptions { return LSAOptions{Dim: 100, MaxTerms: 10000} }

// S2NetOptions are the options of an s2net stage: the payload its vectors
// are stored under (default the stage's name), and its trainer's (see
// fitS2Net). Patience, when nil, is the trainer's own default.
type S2NetOptions struct {
	Payload    string  `yaml:"payload"`
	Dim        int     `yaml:"dim"`
	Iter       int     `yaml:"iter"`
	Gamma      float64 `yaml:"gamma"`
	Init       string  `yaml:"init"`
	MaxTerms   int     `yaml:"max_terms"`
	Pairs      bool    `yaml:"pairs"`
	PairWeight float64 `yaml:"pair_weight"`
	MaxPairs   int     `yaml:"max_pairs"`
	Patience   *int    `yaml:"patience,omitempty"`
	Refit      bool    `yaml:"refit"`
}

// DefaultS2NetOptions returns the options an s2net stage takes when its
// spec gives none.
func DefaultS2NetOptions() S2NetOptions {
	return S2NetOptions{Dim: 200, Iter: 100, Gamma: 10, Init: "lsa", MaxTerms: 10000, Pairs: true}
}

// DSEOptions are the options of a dse stage: the payload its vectors are
// stored under (default the stage's name), mix (the stage's override of
// the model's λ), and its trainer's (see fitDSE). The pointers, when nil,
// are the trainer's own defaults.
type DSEOptions struct {
	Payload        string   `yaml:"payload"`
	C              int      `yaml:"c"`
	D              int      `yaml:"d"`
	Epochs         int      `yaml:"epochs"`
	Input          string   `yaml:"input"`
	Mix            *float64 `yaml:"mix,omitempty"`
	PretrainEpochs *int     `yaml:"pretrain_epochs,omitempty"`
	LR             *float64 `yaml:"lr,omitempty"`
	Patience       *int     `yaml:"patience,omitempty"`
}

// DefaultDSEOptions returns the options a dse stage takes when its spec
// gives none.
func DefaultDSEOptions() DSEOptions { return DSEOptions{C: 50, D: 500, Epochs: 20} }

// conceptData gathers what the concept trainers learn from: in.Train's
// judged candidate lists, its texts and title–body pairs, the unlabelled
// in-domain text, the texts and comparable pairs of in.Corpora; and
// in.Dev's lists for early stopping, when given.
func conceptData(in rerank.TrainInput) (concept.Data, []concept.Judged, error) {
	var d concept.Data
	lists, err := judgedLists(in)
	if err != nil {
		return d, nil, err
	}
	d.Lists = lists
	d.AddCorpus(in.Train, false)
	d.Texts = append(d.Texts, in.Text...)
	var extra concept.Data
	for _, ds := range in.Corpora {
		extra.AddCorpus(ds, true)
	}
	d.Texts = append(d.Texts, extra.Texts...)
	d.Pairs = append(d.Pairs, extra.Pairs...)
	var dev []concept.Judged
	if in.Dev != nil && in.Dev.Qrels != nil {
		if dev, err = concept.JudgedLists(in.Dev); err != nil {
			return d, nil, err
		}
	}
	return d, dev, nil
}

// positive refuses a non-positive value of option name.
func positive[T int | float64](name string, v T) error {
	if !(v > 0) || math.IsInf(float64(v), 0) {
		return fmt.Errorf("option %s: want > 0, got %v", name, v)
	}
	return nil
}

// optionalPositive returns the value of option name, which must be
// positive when given, and 0, the trainer's own default, when nil.
func optionalPositive[T int | float64](name string, p *T) (T, error) {
	if p == nil {
		return 0, nil
	}
	return *p, positive(name, *p)
}

// intOption is the value of an integer option, with its name.
type intOption struct {
	name string
	v    int
}

// positives refuses the first non-positive value of opts.
func positives(opts ...intOption) error {
	for _, o := range opts {
		if err := positive(o.name, o.v); err != nil {
			return err
		}
	}
	return nil
}

// needJudged refuses an input without judged queries to learn from:
// rerank.TrainStage lets a nil in.Train through when in.Text is given,
// which only the unsupervised trainers can learn from.
func needJudged(in rerank.TrainInput) error {
	if in.Train == nil {
		return fmt.Errorf("%w (this stage learns from judged queries; TrainInput.Text is not enough)", rerank.ErrNoTrainingData)
	}
	return nil
}

// judgedLists returns in.Train's judged candidate lists (see
// concept.JudgedLists), refusing an input without them (see needJudged).
func judgedLists(in rerank.TrainInput) ([]concept.Judged, error) {
	if err := needJudged(in); err != nil {
		return nil, err
	}
	return concept.JudgedLists(in.Train)
}

// saveModel writes a trained model into in.Dir, creating it when missing,
// and points spec at it.
func saveModel(spec rerank.StageSpec, in rerank.TrainInput, method string, save func(string) error) (rerank.StageSpec, error) {
	if err := os.MkdirAll(in.Dir, 0o755); err != nil {
		return spec, err
	}
	path := filepath.Join(in.Dir, spec.DisplayName(method)+".model")
	if err := save(path); err != nil {
		return spec, err
	}
	spec.Model = path
	return spec, nil
}

// fitLSA fits LSA. Options: dim (k, default 100), max_terms
// (vocabulary, default 10,000). It uses no judgments.
func fitLSA(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
	o := DefaultLSAOptions()
	if err := spec.DecodeOptions(&o); err != nil {
		return spec, err
	}
	if err := positives(intOption{"dim", o.Dim}, intOption{"max_terms", o.MaxTerms}); err != nil {
		return spec, err
	}
	d, _, err := conceptData(in)
	if err != nil {
		return spec, err
	}
	m, err := lsa.Train(d.Texts, lsa.Config{Dim: o.Dim, Space: concept.SpaceConfig{MaxTerms: o.MaxTerms}, Seed: in.Seed})
	if err != nil {
		return spec, err
	}
	return saveModel(spec, in, lsa.Method, m.Save)
}

// fitS2Net trains S2Net. Options: dim (k, default 200, the best k by
// cross-validation on SemEval B in docs/RESULTS.md), gamma (default 10),
// init (lsa or random), iter (L-BFGS iterations, default 100), max_terms
// (default 10,000), pairs (train on comparable title–body pairs too,
// default true), pair_weight (their loss's weight, default 1), max_pairs
// (at most this many, default 0: all), patience (iterations without a
// better dev MAP before stopping, default 10), refit (after early stopping
// on held-out training lists, train again on all of them; default false,
// no gain on SemEval B in docs/RESULTS.md). Early stopping watches in.Dev,
// or a fifth of the training lists without it.
func fitS2Net(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
	o := DefaultS2NetOptions()
	if err := spec.DecodeOptions(&o); err != nil {
		return spec, err
	}
	err := positives(intOption{"dim", o.Dim}, intOption{"iter", o.Iter}, intOption{"max_terms", o.MaxTerms})
	if err != nil {
		return spec, err
	}
	if o.Gamma <= 0 {
		return spec, fmt.Errorf("option gamma: want > 0, got %g", o.Gamma)
	}
	if o.MaxPairs < 0 {
		return spec, fmt.Errorf("option max_pairs: want ≥ 0, got %d", o.MaxPairs)
	}
	cfg := s2net.Config{Dim: o.Dim, MaxIter: o.Iter, Gamma: o.Gamma, Init: o.Init, Space: concept.SpaceConfig{MaxTerms: o.MaxTerms},
		PairWeight: o.PairWeight, MaxPairs: o.MaxPairs, Refit: o.Refit}
	if !o.Pairs {
		cfg.PairWeight = -1
	}
	if cfg.Patience, err = optionalPositive("patience", o.Patience); err != nil {
		return spec, err
	}
	cfg.Seed = in.Seed
	d, dev, err := conceptData(in)
	if err != nil {
		return spec, err
	}
	steps := newSteps(in, cfg.MaxIter+1)
	m, _, err := s2net.Train(ctx, d, cfg, s2net.Options{Dev: dev, Progress: steps.concept()})
	if err != nil {
		return spec, err
	}
	return saveModel(spec, in, s2net.Method, m.Save)
}

// fitDSE trains DSE. Options: c (embedding dimensions, default 50), d
// (input vocabulary, default 500), input (binary or tfidf-l2, default
// binary), pretrain_epochs (CD-1 epochs per RBM, default 5), epochs
// (fine-tuning epochs, default 20), lr (fine-tuning learning rate, default
// 0.001), patience (epochs without a better dev MAP, default 5), mix (λ of
// the TF-IDF cosine mix; default, or negative: chosen on held-out lists,
// and then left out of the returned spec, as the stage reads mix as an
// override of the model's λ).
func fitDSE(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
	o := DefaultDSEOptions()
	if err := spec.DecodeOptions(&o); err != nil {
		return spec, err
	}
	err := positives(intOption{"c", o.C}, intOption{"d", o.D}, intOption{"epochs", o.Epochs})
	if err != nil {
		return spec, err
	}
	cfg := dse.Config{C: o.C, D: o.D, FineTuneEpochs: o.Epochs, Mix: -1, Input: concept.Scheme(o.Input)}
	if o.Mix != nil {
		cfg.Mix = *o.Mix
	}
	if cfg.PretrainEpochs, err = optionalPositive("pretrain_epochs", o.PretrainEpochs); err != nil {
		return spec, err
	}
	if cfg.FineTuneLR, err = optionalPositive("lr", o.LR); err != nil {
		return spec, err
	}
	if cfg.Patience, err = optionalPositive("patience", o.Patience); err != nil {
		return spec, err
	}
	cfg.Seed = in.Seed
	d, dev, err := conceptData(in)
	if err != nil {
		return spec, err
	}
	// Four RBMs pretrained (by default), then fine-tuning after a first
	// measure.
	pretrain := cfg.PretrainEpochs
	if pretrain == 0 {
		pretrain = 5
	}
	steps := newSteps(in, 4*pretrain+cfg.FineTuneEpochs+1)
	m, _, err := dse.Train(ctx, d, cfg, dse.Options{Dev: dev, Progress: steps.concept()})
	if err != nil {
		return spec, err
	}
	if cfg.Mix < 0 {
		// λ was chosen, and the model holds it: the stage would read a
		// mix left in the spec as its override.
		spec.Options = maps.Clone(spec.Options)
		delete(spec.Options, "mix")
	}
	return saveModel(spec, in, dse.Method, m.Save)
}
