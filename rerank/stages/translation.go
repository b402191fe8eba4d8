package stages

import (
	"context"
	"fmt"

	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/translation"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage(translation.Method, func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		var o TranslationOptions // its trainer's: the stage reads none
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		m, _, err := stageModel(spec, env, translation.Method, translation.Read)
		if err != nil {
			return nil, err
		}
		return &Translation{name: spec.DisplayName(translation.Method), model: m}, nil
	})
	rerank.RegisterTrainer(translation.Method, fitTranslation)
}

// TranslationOptions are the options of a translation stage, its
// trainer's (see fitTranslation and translation.Config), which semrank
// train translation's flags fill too.
type TranslationOptions struct {
	Iterations int     `yaml:"iterations"`
	MinCount   int     `yaml:"min_count"`
	Prune      float64 `yaml:"prune"`
	Lambda     float64 `yaml:"lambda"`
	Beta       float64 `yaml:"beta"`
}

// DefaultTranslationOptions returns the options of translation.DefaultConfig.
func DefaultTranslationOptions() TranslationOptions {
	c := translation.DefaultConfig()
	return TranslationOptions{Iterations: c.Iterations, MinCount: c.MinCount, Prune: c.Prune, Lambda: c.Lambda, Beta: c.Beta}
}

// Translation scores each candidate by the likelihood of the query's words
// under the candidate's translation language model (models/translation):
// how well it answers the query, counting answer words the judged pairs
// showed to follow the query's words. It is computed at rerank time from
// the texts; it needs no index payload.
type Translation struct {
	name  string
	model *translation.Model
}

// Name implements rerank.Stage.
func (s *Translation) Name() string { return s.name }

// ReadsMetadata implements rerank.MetadataReader: the stage reads text
// alone.
func (*Translation) ReadsMetadata() bool { return false }

// Score implements rerank.Stage.
func (s *Translation) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	texts := make([]string, len(cands))
	for i, c := range cands {
		texts[i] = c.FullText()
	}
	return s.model.Score(q.Text, texts), nil
}

// fitTranslation trains the translation table for recipes on the training
// queries' judged candidate lists (see concept.JudgedLists): each query
// with each of its relevant candidates is a pair, and every query and
// candidate text is the collection. Options: iterations (EM, default 10),
// min_count (2), prune (1e-3), lambda (0.2), beta (0.5); see
// translation.Config.
func fitTranslation(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
	cfg, err := translationConfig(spec)
	if err != nil {
		return spec, err
	}
	lists, err := judgedLists(in)
	if err != nil {
		return spec, err
	}
	pairs, texts := translationPairs(lists)
	if len(pairs) == 0 {
		return spec, fmt.Errorf("%s: no query has a candidate judged relevant: there is no question–answer pair to learn from", in.Train.Dir)
	}
	m, err := translation.Train(ctx, pairs, texts, cfg)
	if err != nil {
		return spec, err
	}
	return saveModel(spec, in, translation.Method, m.Save)
}

// translationConfig returns the training configuration spec's options
// ask for.
func translationConfig(spec rerank.StageSpec) (translation.Config, error) {
	o := DefaultTranslationOptions()
	if err := spec.DecodeOptions(&o); err != nil {
		return translation.Config{}, err
	}
	cfg := translation.DefaultConfig()
	cfg.Iterations, cfg.MinCount, cfg.Prune, cfg.Lambda, cfg.Beta = o.Iterations, o.MinCount, o.Prune, o.Lambda, o.Beta
	return cfg, positives(intOption{"iterations", o.Iterations}, intOption{"min_count", o.MinCount})
}

// translationPairs returns the question–answer pairs of lists, each query
// with each of its candidates judged relevant, and the collection's texts:
// each query and each candidate once.
func translationPairs(lists []concept.Judged) (pairs []translation.Pair, texts []string) {
	seen := map[string]bool{}
	for _, l := range lists {
		texts = append(texts, l.Query)
		for i, id := range l.DocIDs {
			if l.Grades[i] > 0 {
				pairs = append(pairs, translation.Pair{Question: l.Query, Answer: l.Docs[i]})
			}
			if !seen[id] {
				seen[id] = true
				texts = append(texts, l.Docs[i])
			}
		}
	}
	return pairs, texts
}
