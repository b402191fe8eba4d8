package stages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/models/topics"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterTrainer("wmd", fitWMD)
	rerank.RegisterTrainer("ssg", fitSSG)
}

// Training options of the wmd and ssg stages (the stages themselves ignore
// them). Word vectors, when spec.Model is empty: embed_method (sgns, the
// default, or ppmi: see embed.MethodPPMI; ppmi reads embed_dim,
// embed_window, embed_min_count and embed_prune_top), embed_dim, embed_window,
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

// EmbedOptions are the word-vector training options of the wmd and ssg
// stages (see above); nil or empty, the default.
type EmbedOptions struct {
	Method   string   `yaml:"embed_method,omitempty"`
	Dim      *int     `yaml:"embed_dim,omitempty"`
	Epochs   *int     `yaml:"embed_epochs,omitempty"`
	MinCount *int     `yaml:"embed_min_count,omitempty"`
	Negative *int     `yaml:"embed_negative,omitempty"`
	PruneTop *int     `yaml:"embed_prune_top,omitempty"`
	Window   *int     `yaml:"embed_window,omitempty"`
	Init     string   `yaml:"embed_init,omitempty"`
	Sample   *float64 `yaml:"embed_sample,omitempty"`
}

// TopicsOptions are the topic-model training options of the ssg stage
// (see above); nil, the default.
type TopicsOptions struct {
	K     *int     `yaml:"topics_k,omitempty"`
	Gamma *float64 `yaml:"topics_gamma,omitempty"`
}

// embedInts returns e's integer options in name order, with the least
// value each takes and the embed.Config field it sets.
func (e EmbedOptions) embedInts(c *embed.Config) []struct {
	name string
	v    *int
	lo   int
	dst  *int
} {
	return []struct {
		name string
		v    *int
		lo   int
		dst  *int
	}{
		{"embed_dim", e.Dim, 1, &c.Dim}, {"embed_epochs", e.Epochs, 1, &c.Epochs}, {"embed_min_count", e.MinCount, 1, &c.MinCount},
		{"embed_negative", e.Negative, 1, &c.Negative}, {"embed_prune_top", e.PruneTop, -1, &c.PruneTop}, {"embed_window", e.Window, 1, &c.Window},
	}
}

// given returns the name of the first option e sets, or "".
func (e EmbedOptions) given() string {
	for _, o := range e.embedInts(&embed.Config{}) {
		if o.v != nil {
			return o.name
		}
	}
	switch {
	case e.Method != "":
		return "embed_method"
	case e.Init != "":
		return "embed_init"
	case e.Sample != nil:
		return "embed_sample"
	}
	return ""
}

// given returns the name of the first option t sets, or "".
func (t TopicsOptions) given() string {
	switch {
	case t.K != nil:
		return "topics_k"
	case t.Gamma != nil:
		return "topics_gamma"
	}
	return ""
}

// fitWMD trains the word vectors of a wmd stage unless spec.Model names
// some already (see fitUnsup).
func fitWMD(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
	var o WMDOptions
	if err := spec.DecodeOptions(&o); err != nil {
		return spec, err
	}
	return fitUnsup(ctx, spec, in, o.EmbedOptions, nil, "")
}

// fitSSG trains the word vectors and the topic model of an ssg stage,
// each unless the spec names one already (model, option topics).
func fitSSG(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
	var o SSGOptions
	if err := spec.DecodeOptions(&o); err != nil {
		return spec, err
	}
	return fitUnsup(ctx, spec, in, o.EmbedOptions, &o.TopicsOptions, o.Topics)
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
// options for it are an error rather than silently ignored. t holds the
// topic model's training options of an ssg stage (nil for wmd), and
// topicsPath its option topics.
func fitUnsup(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput, e EmbedOptions, t *TopicsOptions, topicsPath string) (rerank.StageSpec, error) {
	ecfg, err := e.config(in.Seed)
	if err != nil {
		return spec, err
	}
	initPath, dimGiven := e.Init, e.Dim != nil
	wantTopics := t != nil
	var tcfg topics.Config
	if wantTopics {
		if tcfg, err = t.config(in.Seed); err != nil {
			return spec, err
		}
	}
	trainVectors := spec.Model == ""
	trainTopics := wantTopics && topicsPath == ""
	if !trainVectors {
		if o := e.given(); o != "" {
			return spec, fmt.Errorf("option %s trains word vectors, but model %s is given", o, spec.Model)
		}
	}
	if wantTopics && !trainTopics {
		if o := t.given(); o != "" {
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

// config returns the word-vector training configuration e asks for.
func (e EmbedOptions) config(seed uint64) (embed.Config, error) {
	cfg := embed.DefaultConfig()
	cfg.Epochs, cfg.MinCount = recipeEpochs, recipeMinCount
	for _, o := range e.embedInts(&cfg) {
		if o.v == nil {
			continue
		}
		if v := *o.v; v < o.lo {
			return cfg, fmt.Errorf("option %s: %d, want ≥ %d", o.name, v, o.lo)
		}
		*o.dst = *o.v
	}
	if cfg.Dim > embed.MaxDim {
		return cfg, fmt.Errorf("option embed_dim: %d, want ≤ %d", cfg.Dim, embed.MaxDim)
	}
	if cfg.PruneTop == 0 {
		cfg.PruneTop = -1 // 0 means the default to embed.Config; here, none
	}
	if e.Sample != nil {
		cfg.Sample = *e.Sample
	}
	if cfg.Sample <= 0 {
		return cfg, fmt.Errorf("option embed_sample: %g, want > 0 (1 keeps every word)", cfg.Sample)
	}
	if seed != 0 {
		cfg.Seed = int64(seed)
	}
	switch e.Method {
	case "", embed.MethodSGNS:
	case embed.MethodPPMI:
		for _, o := range []struct {
			name string
			set  bool
		}{{"embed_epochs", e.Epochs != nil}, {"embed_negative", e.Negative != nil}, {"embed_sample", e.Sample != nil}, {"embed_init", e.Init != ""}} {
			if o.set {
				return cfg, fmt.Errorf("option %s applies to embed_method sgns only", o.name)
			}
		}
		cfg.Method = embed.MethodPPMI
	default:
		return cfg, fmt.Errorf("option embed_method: %q, want %s or %s", e.Method, embed.MethodSGNS, embed.MethodPPMI)
	}
	return cfg, nil
}

// config returns the topic-model training configuration t asks for.
func (t TopicsOptions) config(seed uint64) (topics.Config, error) {
	k, gamma := topics.DefaultK, 1.1
	if t.K != nil {
		k = *t.K
	}
	if t.Gamma != nil {
		gamma = *t.Gamma
	}
	if k < 2 {
		return topics.Config{}, fmt.Errorf("option topics_k: %d topics, want ≥ 2", k)
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
