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
	rerank.RegisterTrainer(lsa.Method, fitLSA, "dim", "max_terms")
	rerank.RegisterTrainer(s2net.Method, fitS2Net, "dim", "iter", "gamma", "init", "max_terms", "pairs", "pair_weight", "max_pairs", "patience", "refit")
	rerank.RegisterTrainer(dse.Method, fitDSE, "c", "d", "epochs", "mix", "input", "pretrain_epochs", "lr", "patience")
}

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

// spaceConfig reads the vocabulary size option shared by LSA and S2Net.
func spaceConfig(spec rerank.StageSpec) (concept.SpaceConfig, error) {
	n, err := positiveInt(spec, "max_terms", 10000)
	return concept.SpaceConfig{MaxTerms: n}, err
}

// positiveInt reads an integer option that must be positive.
func positiveInt(spec rerank.StageSpec, name string, def int) (int, error) {
	v, err := spec.Int(name, def)
	if err != nil {
		return 0, err
	}
	if v <= 0 {
		return 0, fmt.Errorf("option %s: want > 0, got %d", name, v)
	}
	return v, nil
}

// optionalPositive reads a number option that must be positive when given,
// and is 0, the trainer's own default, when absent.
func optionalPositive[T int | float64](spec rerank.StageSpec, name string) (T, error) {
	if _, ok := spec.Options[name]; !ok {
		return 0, nil
	}
	v, err := spec.Float(name, 0)
	if err == nil && !(v > 0 && v == float64(T(v)) && !math.IsInf(v, 0)) {
		err = fmt.Errorf("option %s: want a positive %T, got %v", name, T(0), spec.Options[name])
	}
	return T(v), err
}

// intOption is a positive integer option, its default, and where it goes.
type intOption struct {
	name string
	def  int
	dst  *int
}

// positiveInts reads every option of opts, stopping at the first error.
func positiveInts(spec rerank.StageSpec, opts ...intOption) error {
	for _, o := range opts {
		v, err := positiveInt(spec, o.name, o.def)
		if err != nil {
			return err
		}
		*o.dst = v
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
	dim, err := positiveInt(spec, "dim", 100)
	if err != nil {
		return spec, err
	}
	space, err := spaceConfig(spec)
	if err != nil {
		return spec, err
	}
	d, _, err := conceptData(in)
	if err != nil {
		return spec, err
	}
	m, err := lsa.Train(d.Texts, lsa.Config{Dim: dim, Space: space, Seed: in.Seed})
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
	var cfg s2net.Config
	err := positiveInts(spec, intOption{"dim", 200, &cfg.Dim}, intOption{"iter", 100, &cfg.MaxIter})
	if err != nil {
		return spec, err
	}
	if cfg.Gamma, err = spec.Float("gamma", 10); err != nil {
		return spec, err
	}
	if cfg.Gamma <= 0 {
		return spec, fmt.Errorf("option gamma: want > 0, got %g", cfg.Gamma)
	}
	if cfg.Init, err = spec.Str("init", "lsa"); err != nil {
		return spec, err
	}
	if cfg.Space, err = spaceConfig(spec); err != nil {
		return spec, err
	}
	pairs, err := spec.Bool("pairs", true)
	if err != nil {
		return spec, err
	}
	if !pairs {
		cfg.PairWeight = -1
	}
	if pairs {
		if cfg.PairWeight, err = spec.Float("pair_weight", 0); err != nil {
			return spec, err
		}
	}
	if cfg.MaxPairs, err = spec.Int("max_pairs", 0); err != nil {
		return spec, err
	}
	if cfg.MaxPairs < 0 {
		return spec, fmt.Errorf("option max_pairs: want ≥ 0, got %d", cfg.MaxPairs)
	}
	if cfg.Patience, err = optionalPositive[int](spec, "patience"); err != nil {
		return spec, err
	}
	if cfg.Refit, err = spec.Bool("refit", false); err != nil {
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
	var cfg dse.Config
	err := positiveInts(spec, intOption{"c", 50, &cfg.C}, intOption{"d", 500, &cfg.D}, intOption{"epochs", 20, &cfg.FineTuneEpochs})
	if err != nil {
		return spec, err
	}
	if cfg.Mix, err = spec.Float("mix", -1); err != nil {
		return spec, err
	}
	input, err := spec.Str("input", "")
	if err != nil {
		return spec, err
	}
	cfg.Input = concept.Scheme(input)
	if cfg.PretrainEpochs, err = optionalPositive[int](spec, "pretrain_epochs"); err != nil {
		return spec, err
	}
	if cfg.FineTuneLR, err = optionalPositive[float64](spec, "lr"); err != nil {
		return spec, err
	}
	if cfg.Patience, err = optionalPositive[int](spec, "patience"); err != nil {
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
