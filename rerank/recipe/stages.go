package recipe

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/stages"
)

// Available returns the specs whose stage types are registered, so a
// recipe uses every stage this build has and nothing it lacks.
func Available(specs ...rerank.StageSpec) []rerank.StageSpec {
	types := rerank.StageTypes()
	var out []rerank.StageSpec
	for _, s := range specs {
		if slices.Contains(types, s.Type) {
			out = append(out, s)
		}
	}
	return out
}

// Trained returns the specs whose stage types have a registered trainer:
// model-backed stages a recipe can train.
func Trained(specs ...rerank.StageSpec) []rerank.StageSpec {
	var out []rerank.StageSpec
	for _, s := range Available(specs...) {
		if rerank.Trainable(s.Type) {
			out = append(out, s)
		}
	}
	return out
}

// ParseStages turns stage type names into specs for ablations: "lexical"
// stands for LexicalStages, "meta" for the forum metadata stages (comment
// position, written by the asker, thread structure, surface text),
// "thread_text" for the TF-IDF cosine between a subtask B query and the
// related question's thread of answers, "peers" for a comment's TF-IDF
// similarity to the other users' comments in its thread, "quality_context"
// for the quality model with every thread context feature, "quality_words"
// for it without character n-grams, "titles" for the TF-IDF cosine of the
// query's subject and the candidate's title, any other name for that stage
// type. A stage type may carry options, TYPE:KEY=VALUE[:KEY=VALUE...]
// (e.g. "s2net:dim=100"), and is then named TYPE_KEYVALUE..., so that one
// stage set can hold one type twice with different options.
func ParseStages(names []string) ([]rerank.StageSpec, error) {
	var out []rerank.StageSpec
	types := rerank.StageTypes()
	for _, n := range names {
		switch n {
		case "lexical":
			out = append(out, LexicalStages()...)
		case "meta":
			out = append(out, metaStages()...)
		case "titles":
			out = append(out, rerank.StageSpec{Type: "tfidf", Name: "titles", Options: map[string]any{"titles": true}})
		case "quality_words":
			out = append(out, rerank.StageSpec{Type: "quality", Name: "quality_words", Options: map[string]any{"chars": false}})
		case "quality_context":
			out = append(out, rerank.StageSpec{Type: "quality", Name: "quality_context", Options: map[string]any{"context": stages.QualityContextAll}})
		case "thread_text":
			out = append(out, threadTextStage())
		case "peers":
			out = append(out, peersStage())
		default:
			spec, err := parseStageOptions(n)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(types, spec.Type) {
				return nil, fmt.Errorf("recipe: unknown stage type %q (known: lexical, meta, thread_text, peers, titles, quality_context, quality_words, %v)", spec.Type, types)
			}
			out = append(out, spec)
		}
	}
	if err := checkBuildable(out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkBuildable builds, against an empty in-memory index, each stage that
// no trainer makes: such a stage reads its options only when it is built,
// so a misspelt or missing option would otherwise be refused only once
// the data is converted and every model trained. (A trainer checks its
// own stage's options when it starts.)
func checkBuildable(specs []rerank.StageSpec) error {
	var env rerank.Env
	for _, s := range specs {
		if rerank.Trainable(s.Type) {
			continue
		}
		if env.Stats == nil {
			mem, err := index.Create("")
			if err != nil {
				return err
			}
			defer mem.Close()
			env = rerank.EnvFor(mem)
		}
		if _, err := rerank.NewStage(s, env); err != nil {
			return fmt.Errorf("recipe: %w", err)
		}
	}
	return nil
}

// ParseAfterFusion parses the step a recipe's pipelines take after their
// fusion: "none" (nil), or "regularize[:KEY=VALUE...]", the regularize
// stage over the fused scores with those options (k, alpha; see
// rerank.FusionSpec.Regularize), as a pipeline's fusion.regularize. The
// options are checked here, before any data is read.
func ParseAfterFusion(s string) (*map[string]any, error) {
	if s == "" || s == "none" {
		return nil, nil
	}
	spec, err := parseStageOptions(s)
	if err != nil {
		return nil, err
	}
	if spec.Type != "regularize" {
		return nil, fmt.Errorf("recipe: step after fusion %q: want none or regularize[:KEY=VALUE...]", s)
	}
	opts := spec.Options
	if opts == nil {
		opts = map[string]any{}
	}
	if err := checkBuildable([]rerank.StageSpec{{Type: spec.Type, Name: rerank.SmoothName, Options: opts}}); err != nil {
		return nil, err
	}
	return &opts, nil
}

// parseStageOptions turns "TYPE[:KEY=VALUE...]" into a spec; values that
// read as integers, numbers or booleans become those, others strings.
func parseStageOptions(n string) (rerank.StageSpec, error) {
	typ, rest, found := strings.Cut(n, ":")
	spec := rerank.StageSpec{Type: typ}
	if !found {
		return spec, nil
	}
	spec.Name = strings.NewReplacer(":", "_", "=", "").Replace(n)
	spec.Options = map[string]any{}
	for _, kv := range strings.Split(rest, ":") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			return spec, fmt.Errorf("recipe: stage %q: option %q is not KEY=VALUE", n, kv)
		}
		if i, err := strconv.Atoi(v); err == nil {
			spec.Options[k] = i
		} else if f, err := strconv.ParseFloat(v, 64); err == nil {
			spec.Options[k] = f
		} else if b, err := strconv.ParseBool(v); err == nil {
			spec.Options[k] = b
		} else {
			spec.Options[k] = v
		}
	}
	return spec, nil
}

// threadTextStage compares a subtask B query with the answers in the
// related question's thread (TF-IDF cosine over metadata "thread_text").
func threadTextStage() rerank.StageSpec {
	return rerank.StageSpec{Type: "tfidf", Name: "thread", Options: map[string]any{"field": "thread_text"}}
}

// peersStage scores a subtask A comment by its TF-IDF similarity to the
// other users' comments in the thread (see stages.TFIDF's Peers).
func peersStage() rerank.StageSpec {
	return rerank.StageSpec{Type: "tfidf", Name: "peers", Options: map[string]any{"peers": true}}
}

func metaStages() []rerank.StageSpec {
	return []rerank.StageSpec{
		{Type: "meta", Name: "position", Options: map[string]any{"field": "position", "transform": "neglog"}},
		{Type: "meta", Name: "asker", Options: map[string]any{"field": "by_question_author"}},
		{Type: "thread", Name: "asker_after", Options: map[string]any{"feature": "asker_after"}},
		{Type: "thread", Name: "user_repeats", Options: map[string]any{"feature": "user_repeats"}},
		{Type: "thread", Name: "asker_next", Options: map[string]any{"feature": "asker_next"}},
		{Type: "thread", Name: "asker_thanks", Options: map[string]any{"feature": "asker_thanks"}},
		{Type: "thread", Name: "asker_names", Options: map[string]any{"feature": "asker_names"}},
		{Type: "thread", Name: "dialogue", Options: map[string]any{"feature": "dialogue"}},
		{Type: "surface", Name: "questions", Options: map[string]any{"feature": "questions"}},
		{Type: "surface", Name: "urls", Options: map[string]any{"feature": "urls"}},
		{Type: "surface", Name: "digits", Options: map[string]any{"feature": "digits"}},
	}
}

// LexicalStages are the cheap features every recipe starts from.
func LexicalStages() []rerank.StageSpec {
	return []rerank.StageSpec{
		{Type: "tfidf"}, {Type: "bm25"}, {Type: "overlap"}, {Type: "length"},
	}
}

// stageNames returns the specs' display names, for the log.
func stageNames(specs []rerank.StageSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.DisplayName(s.Type))
	}
	return out
}
