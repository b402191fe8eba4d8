package stages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/models/topics"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterTrainer("wmd", fitWMD, embedOptions...)
	rerank.RegisterTrainer("ssg", fitSSG, slices.Concat(embedOptions, topicsOptions, []string{"topics"})...)
}

// Training options of the wmd and ssg stages (the stages themselves ignore
// them). Word vectors, when spec.Model is empty: embed_dim, embed_window,
// embed_negative, embed_epochs, embed_min_count, embed_prune_top (0 or
// -1: none), embed_sample (1: no sub-sampling), embed_init (pre-trained
// vectors to fine-tune, a file embed.LoadFile reads: GloVe or word2vec
// text, word2vec binary or a bundle; their dimension is then the
// vectors', and their words stay in the vocabulary below the minimum
// count, see embed.Config.Init; a relative path is read from the working
// directory). Defaults: those of
// embed.DefaultConfig() and semrank train embed (dimension 100, window 5,
// 5 negative samples, the 30 most frequent words pruned, sub-sampling
// 1e-3) except 10 epochs and minimum count 5 (recipeEpochs,
// recipeMinCount). Topic model (ssg), when option topics is empty:
// topics_k (default topics.DefaultK, 50) and topics_gamma (default 1.1),
// as semrank train topics. The random seed is TrainInput.Seed (0: 1).
//
// Recipes train on small in-domain collections, where word2vec's 5
// epochs are too few: WMD alone reranking BM25's top 100 on CACM (vectors
// from the 3,204 abstracts, before the converter kept their keywords) has
// MAP 0.096 with 5 epochs and minimum count 2, 0.143 with 10 and 5; on
// SemEval-2016 B dev (vectors from all SemEval question and comment text)
// MAP@10 0.629 and 0.685. Training takes 12 s and 20 s on one core, once
// per process (see fitUnsup).
const (
	recipeEpochs   = 10
	recipeMinCount = 5
)

var (
	embedIntOptions = map[string]func(*embed.Config) *int{
		"embed_dim":       func(c *embed.Config) *int { return &c.Dim },
		"embed_window":    func(c *embed.Config) *int { return &c.Window },
		"embed_negative":  func(c *embed.Config) *int { return &c.Negative },
		"embed_epochs":    func(c *embed.Config) *int { return &c.Epochs },
		"embed_min_count": func(c *embed.Config) *int { return &c.MinCount },
		"embed_prune_top": func(c *embed.Config) *int { return &c.PruneTop },
	}
	embedOptions  = append(slices.Sorted(maps.Keys(embedIntOptions)), "embed_init", "embed_sample")
	topicsOptions = []string{"topics_k", "topics_gamma"}
)

// fitWMD trains the word vectors of a wmd stage unless spec.Model names
// some already (see fitUnsup).
func fitWMD(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
	return fitUnsup(ctx, spec, in, false)
}

// fitSSG trains the word vectors and the topic model of an ssg stage,
// each unless the spec names one already (model, option topics).
func fitSSG(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
	return fitUnsup(ctx, spec, in, true)
}

// fitUnsup trains what a wmd or ssg stage lacks from unlabeled text: no
// judgment is used. The text is in.Text, or when that is empty the full
// text of in.Train's documents and queries. Models are written into in.Dir
// under names derived from the training text and settings:
//
//	vectors-<fingerprint>.embed   word vectors (spec.Model)
//	topics-<fingerprint>.topics   topic model (option topics, an absolute path)
//
// where the fingerprint (also the bundle's training fingerprint) hashes
// the model's settings and the text. A stage trained on the same text with
// the same settings therefore reuses a file in in.Dir instead of training
// again: wmd and ssg stages of one pipeline share one vectors file, and
// SSG-WD and SSG-D one topic model. Within a process a file trained into
// another directory (an earlier cross-fitting fold) is copied rather than
// retrained, since training is deterministic. A model the spec already
// names (pre-trained vectors, a topic model) is kept, and then training
// options for it are an error rather than silently ignored.
func fitUnsup(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput, wantTopics bool) (rerank.StageSpec, error) {
	var opts []string
	if wantTopics {
		opts = topicsOptions
	}
	if err := checkTrainOptions(spec, append(slices.Clone(embedOptions), opts...)); err != nil {
		return spec, err
	}
	ecfg, err := embedConfig(spec, in.Seed)
	if err != nil {
		return spec, err
	}
	initPath, err := spec.Str("embed_init", "")
	if err != nil {
		return spec, err
	}
	_, dimGiven := spec.Options["embed_dim"]
	var tcfg topics.Config
	var topicsPath string
	if wantTopics {
		if topicsPath, err = spec.Str("topics", ""); err != nil {
			return spec, err
		}
		if tcfg, err = topicsConfig(spec, in.Seed); err != nil {
			return spec, err
		}
	}
	trainVectors := spec.Model == ""
	trainTopics := wantTopics && topicsPath == ""
	if !trainVectors {
		if o := givenOption(spec, embedOptions); o != "" {
			return spec, fmt.Errorf("option %s trains word vectors, but model %s is given", o, spec.Model)
		}
	}
	if wantTopics && !trainTopics {
		if o := givenOption(spec, topicsOptions); o != "" {
			return spec, fmt.Errorf("option %s trains a topic model, but option topics names %s", o, topicsPath)
		}
	}
	if !trainVectors && !trainTopics {
		return spec, nil
	}
	texts := in.Text
	if len(texts) == 0 {
		texts = datasetTexts(in.Train)
	}
	if len(texts) == 0 {
		return spec, errors.New("no text to train on: TrainInput.Text and the training set are empty")
	}
	if err := os.MkdirAll(in.Dir, 0o755); err != nil {
		return spec, err
	}
	textHash := models.HashStrings(texts)
	var sents [][]string // tokenized once, when something is trained
	sentences := func() [][]string {
		if sents == nil {
			sents = embed.Sentences(texts)
		}
		return sents
	}
	// The options map is shared with the caller's spec (a recipe trains
	// the same spec once per fold): copy before setting anything.
	spec.Options = maps.Clone(spec.Options)
	if trainVectors {
		vecHash := textHash
		if initPath != "" {
			// The vectors trained depend on the file's content, which
			// the configuration does not hold (Config.Init is not
			// serialised).
			sum, err := rerank.FileSHA256(initPath)
			if err != nil {
				return spec, fmt.Errorf("option embed_init: %w", err)
			}
			vecHash = models.Fingerprint(textHash, "init", sum)
		}
		key, err := fingerprint(embed.Method, ecfg, vecHash)
		if err != nil {
			return spec, err
		}
		path := filepath.Join(in.Dir, "vectors-"+key+".embed")
		err = reuseOrTrain(path, embed.Method, embed.Version, key, func() (*models.Bundle, error) {
			if initPath != "" {
				v, err := embed.LoadFile(initPath, embed.FormatAuto)
				if err != nil {
					return nil, fmt.Errorf("option embed_init: %w", err)
				}
				if dimGiven && v.Dim != ecfg.Dim {
					return nil, fmt.Errorf("option embed_dim %d, but the embed_init vectors %s have %d dimensions", ecfg.Dim, initPath, v.Dim)
				}
				ecfg.Dim, ecfg.Init = v.Dim, v
			}
			v, err := embed.Train(ctx, sentences(), ecfg)
			if err != nil {
				return nil, err
			}
			return v.Bundle(ecfg)
		})
		if err != nil {
			return spec, err
		}
		spec.Model = path
	}
	if trainTopics {
		key, err := fingerprint(topics.Method, tcfg, textHash)
		if err != nil {
			return spec, err
		}
		path, err := filepath.Abs(filepath.Join(in.Dir, "topics-"+key+".topics"))
		if err != nil {
			return spec, err
		}
		err = reuseOrTrain(path, topics.Method, topics.Version, key, func() (*models.Bundle, error) {
			m, err := topics.Train(ctx, sentences(), tcfg)
			if err != nil {
				return nil, err
			}
			return m.Bundle()
		})
		if err != nil {
			return spec, err
		}
		if spec.Options == nil {
			spec.Options = map[string]any{}
		}
		// Absolute: pipelines resolve options against their own file,
		// which a trainer does not know (and recipes relativize only
		// spec.Model).
		spec.Options["topics"] = path
	}
	return spec, nil
}

// checkTrainOptions rejects options with a training prefix (embed_,
// topics_) that are not among known: a misspelt training option would
// otherwise be ignored.
func checkTrainOptions(spec rerank.StageSpec, known []string) error {
	for _, name := range slices.Sorted(maps.Keys(spec.Options)) {
		if (strings.HasPrefix(name, "embed_") || strings.HasPrefix(name, "topics_")) && !slices.Contains(known, name) {
			return fmt.Errorf("unknown training option %s for stage type %s (known: %s)", name, spec.Type, strings.Join(known, ", "))
		}
	}
	return nil
}

// givenOption returns the first of names that spec sets, or "".
func givenOption(spec rerank.StageSpec, names []string) string {
	for _, n := range names {
		if _, ok := spec.Options[n]; ok {
			return n
		}
	}
	return ""
}

func embedConfig(spec rerank.StageSpec, seed uint64) (embed.Config, error) {
	cfg := embed.DefaultConfig()
	cfg.Epochs, cfg.MinCount = recipeEpochs, recipeMinCount
	for _, name := range slices.Sorted(maps.Keys(embedIntOptions)) {
		dst := embedIntOptions[name](&cfg)
		v, err := spec.Int(name, *dst)
		if err != nil {
			return cfg, err
		}
		lo := 1
		if name == "embed_prune_top" {
			lo = -1
		}
		if v < lo {
			return cfg, fmt.Errorf("option %s: %d, want ≥ %d", name, v, lo)
		}
		if name == "embed_dim" && v > embed.MaxDim {
			return cfg, fmt.Errorf("option embed_dim: %d, want ≤ %d", v, embed.MaxDim)
		}
		*dst = v
	}
	if cfg.PruneTop == 0 {
		cfg.PruneTop = -1 // 0 means the default to embed.Config; here, none
	}
	var err error
	if cfg.Sample, err = spec.Float("embed_sample", cfg.Sample); err != nil {
		return cfg, err
	}
	if cfg.Sample <= 0 {
		return cfg, fmt.Errorf("option embed_sample: %g, want > 0 (1 keeps every word)", cfg.Sample)
	}
	if seed != 0 {
		cfg.Seed = int64(seed)
	}
	return cfg, nil
}

func topicsConfig(spec rerank.StageSpec, seed uint64) (topics.Config, error) {
	k, err := spec.Int("topics_k", topics.DefaultK)
	if err != nil {
		return topics.Config{}, err
	}
	if k < 2 {
		return topics.Config{}, fmt.Errorf("option topics_k: %d topics, want ≥ 2", k)
	}
	gamma, err := spec.Float("topics_gamma", 1.1)
	if err != nil {
		return topics.Config{}, err
	}
	if gamma < 1 {
		return topics.Config{}, fmt.Errorf("option topics_gamma: %g, want ≥ 1 (a catchword's margin over every other topic)", gamma)
	}
	cfg := topics.Config{K: k, Gamma: gamma, Seed: 1}
	if seed != 0 {
		cfg.Seed = seed
	}
	return cfg, nil
}

// datasetTexts returns the full text of ds's documents and queries.
func datasetTexts(ds *dataset.Dataset) []string {
	if ds == nil {
		return nil
	}
	out := make([]string, 0, len(ds.Corpus)+len(ds.Queries))
	for _, d := range ds.Corpus {
		out = append(out, d.FullText())
	}
	for _, q := range ds.Queries {
		out = append(out, q.FullText())
	}
	return out
}

// fingerprint hashes a model's method, settings and training text.
func fingerprint(method string, cfg any, textHash string) (string, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return "", err
	}
	// The analyzer's identity is part of the key: after a change to how
	// text is analyzed, a cached model's words are not this build's, and
	// its loader would refuse it (models.Bundle.CheckAnalyzer).
	return models.Fingerprint(method, string(raw), textHash, analyzers.WordsID()), nil
}

var (
	// unsupMu serialises reuseOrTrain, so that two stages needing the same
	// model never train it twice at once.
	unsupMu sync.Mutex
	// unsupTrained maps fingerprints to files trained by this process.
	unsupTrained = map[string]string{}
)

// reuseOrTrain makes path hold the model with training fingerprint key:
// the file already there, a copy of one this process trained elsewhere, or
// a newly trained one.
func reuseOrTrain(path, method string, version int, key string, train func() (*models.Bundle, error)) error {
	unsupMu.Lock()
	defer unsupMu.Unlock()
	load := func(p string) *models.Bundle {
		b, err := models.Load(p, method, version)
		if err != nil || b.Manifest.TrainingFingerprint != key {
			return nil
		}
		return b
	}
	if load(path) != nil {
		return nil
	}
	if src, ok := unsupTrained[key]; ok {
		if b := load(src); b != nil {
			return b.Save(path)
		}
	}
	b, err := train()
	if err != nil {
		return err
	}
	b.Manifest.TrainingFingerprint = key
	if err := b.Save(path); err != nil {
		return err
	}
	unsupTrained[key] = path
	return nil
}
