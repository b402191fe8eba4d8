package stages

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/quality"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage(quality.Method, func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		o := DefaultQualityOptions()
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		m, path, err := stageModel(spec, env, quality.Method, quality.Read)
		if err != nil {
			return nil, err
		}
		if err := checkQualityContext(m.Config.Context); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return newQuality(spec, o.Payload, m, env.Payloads)
	})
	rerank.RegisterTrainer(quality.Method, fitQuality)
}

// QualityOptions are the options of a quality stage: the payload its
// scores are stored under (default "quality"), and its trainer's (see
// fitQuality), which semrank train quality's flags fill too.
type QualityOptions struct {
	Payload  string  `yaml:"payload"`
	L2       float64 `yaml:"l2"`
	MinCount int     `yaml:"min_count"`
	Bigrams  bool    `yaml:"bigrams"`
	Chars    bool    `yaml:"chars"`
	Context  string  `yaml:"context"`
}

// DefaultQualityOptions returns the options a quality stage takes when
// its spec gives none.
func DefaultQualityOptions() QualityOptions {
	return QualityOptions{L2: 3e-4, MinCount: 2, Bigrams: true, Chars: true}
}

// Quality scores each candidate by how much it reads like a good answer,
// whatever the query (models/quality): the log-odds of its words and,
// when the model was trained with them, of its context in the thread.
type Quality struct {
	name    string
	model   *quality.Model
	encoder rerank.PayloadEncoder // nil for models with context features
	stored  storedPayload         // zero for models with context features
	cache   qualityCache
}

// newQuality returns the stage for m, reading the index's stored scores
// (payload "quality", or the name option "payload" gives) when m wrote
// them; an index whose scores another model wrote is an error, naming
// both.
func newQuality(spec rerank.StageSpec, payload string, m *quality.Model, payloads rerank.Payloads) (*Quality, error) {
	s := &Quality{name: spec.DisplayName(quality.Method), model: m}
	if len(m.Config.Context) > 0 {
		return s, nil
	}
	enc, err := quality.NewEncoder(m)
	if err != nil {
		return nil, err
	}
	s.encoder = payloadNamed(payload, enc)
	if s.stored, err = newStoredPayload(payloads, s.encoder); err != nil {
		return nil, err
	}
	return s, nil
}

// PayloadEncoder implements rerank.PayloadStage: the score stored at index
// time, or nil for models with context features.
func (s *Quality) PayloadEncoder() rerank.PayloadEncoder {
	if s.encoder == nil {
		return nil
	}
	return s.encoder
}

// Name implements rerank.Stage.
func (s *Quality) Name() string { return s.name }

// ReadsDocs implements rerank.DocReader: a model with context features
// reads every candidate; one without reads the text where the index holds
// no score.
func (s *Quality) ReadsDocs(ctx context.Context, ids []string, reads []bool) error {
	if len(s.model.Config.Context) > 0 {
		return allRead(reads)
	}
	return s.stored.missingIn(ctx, ids, reads)
}

// WindowPayloads implements rerank.PayloadReader: the stored scores,
// where ReadsDocs reads them.
func (s *Quality) WindowPayloads() (rerank.Payloads, []rerank.PayloadKind) {
	if len(s.model.Config.Context) > 0 {
		return nil, nil
	}
	return s.stored.windowPayloads()
}

// Score implements rerank.Stage.
func (s *Quality) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	ctxFeats, err := qualityContext(ctx, s.model.Config.Context, q, cands)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(cands))
	stored, err := s.stored.window(ctx, cands)
	if err != nil {
		return nil, err
	}
	for i, c := range cands {
		if len(ctxFeats[i]) > 0 {
			out[i] = s.model.Score(c.FullText(), ctxFeats[i]...)
			continue
		}
		if b := stored[i]; b != nil {
			if out[i], err = quality.DecodeScore(b); err != nil {
				return nil, fmt.Errorf("document %s: %w", c.ID, err)
			}
			continue
		}
		out[i] = s.cache.score(c, s.model)
	}
	return out, nil
}

// qualityCacheSize bounds the scores a Quality stage remembers.
const qualityCacheSize = 1 << 16

// qualityCache remembers the scores of candidates seen before: without
// context features a candidate's score does not depend on the query, and
// the same documents come back query after query on a server. Entries are
// keyed by document ID and checked against a hash of the text, so a
// different document under a reused ID is scored afresh. The cache is
// emptied when full.
type qualityCache struct {
	mu   sync.Mutex
	seed maphash.Seed
	m    map[string]cachedScore
}

type cachedScore struct {
	text  uint64
	score float64
}

func (c *qualityCache) score(cand rerank.Candidate, m *quality.Model) float64 {
	text := cand.FullText()
	c.mu.Lock()
	if c.m == nil {
		c.seed = maphash.MakeSeed()
		c.m = make(map[string]cachedScore)
	}
	h := maphash.String(c.seed, text)
	if e, ok := c.m[cand.ID]; ok && e.text == h && cand.ID != "" {
		c.mu.Unlock()
		return e.score
	}
	c.mu.Unlock()
	v := m.Score(text)
	if cand.ID == "" {
		return v
	}
	c.mu.Lock()
	if len(c.m) >= qualityCacheSize {
		clear(c.m)
	}
	c.m[cand.ID] = cachedScore{h, v}
	c.mu.Unlock()
	return v
}

// Context features of the quality model: the metadata and thread features
// a comment's words do not show. Binary ones become "ctx:NAME" when set;
// position and user_repeats become "ctx:NAME=N", capped, so the model can
// weigh each value on its own.
var (
	qualityBinary = []string{"asker", "asker_after", "asker_next", "asker_thanks", "asker_names", "dialogue"}
	qualityCapped = map[string]int{"position": 10, "user_repeats": 5}
)

// qualityMeta maps context features read straight from metadata to their
// field.
var qualityMeta = map[string]string{"asker": "by_question_author", "position": "position"}

// QualityContextAll lists every context feature, for forum data such as
// SemEval subtask A.
const QualityContextAll = "asker,position,asker_after,asker_next,asker_thanks,asker_names,dialogue,user_repeats"

func checkQualityContext(names []string) error {
	for _, n := range names {
		if _, ok := qualityCapped[n]; !ok && !slices.Contains(qualityBinary, n) {
			return fmt.Errorf("quality: unknown context feature %q (known: %s)", n, QualityContextAll)
		}
	}
	return nil
}

// qualityContext computes the context features of each candidate.
func qualityContext(ctx context.Context, names []string, q rerank.Query, cands []rerank.Candidate) ([][]string, error) {
	out := make([][]string, len(cands))
	for _, n := range names {
		var vals []float64
		if field, ok := qualityMeta[n]; ok {
			vals = make([]float64, len(cands))
			for i, c := range cands {
				vals[i], _ = numeric(c.Metadata[field])
			}
		} else {
			var err error
			if vals, err = (&Thread{Feature: n}).Score(ctx, q, cands); err != nil {
				return nil, err
			}
		}
		for i, v := range vals {
			if c, ok := qualityCapped[n]; ok {
				out[i] = append(out[i], fmt.Sprintf("ctx:%s=%d", n, min(max(int(v), 0), c)))
			} else if v != 0 {
				out[i] = append(out[i], "ctx:"+n)
			}
		}
	}
	return out, nil
}

// fitQuality trains the quality classifier for recipes on the candidates of
// the training queries (judged relevant is good; see concept.JudgedLists).
// Options: l2 (default 3e-4), min_count (default 2), bigrams (default
// true), chars (character n-grams, default true: +0.006 MAP by CV on
// SemEval A, docs/RESULTS.md), context (comma-separated context features, default none; see
// QualityContextAll).
func fitQuality(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
	o := DefaultQualityOptions()
	if err := spec.DecodeOptions(&o); err != nil {
		return spec, err
	}
	if o.L2 <= 0 {
		return spec, fmt.Errorf("option l2: want > 0, got %v", o.L2)
	}
	if err := positive("min_count", o.MinCount); err != nil {
		return spec, err
	}
	cfg := quality.Config{L2: o.L2, MinCount: o.MinCount, Bigrams: o.Bigrams, Chars: o.Chars}
	for _, n := range strings.Split(o.Context, ",") {
		if n = strings.TrimSpace(n); n != "" {
			cfg.Context = append(cfg.Context, n)
		}
	}
	if err := checkQualityContext(cfg.Context); err != nil {
		return spec, err
	}
	lists, err := judgedLists(in)
	if err != nil {
		return spec, err
	}
	var ex []quality.Example
	for _, l := range lists {
		cands := make([]rerank.Candidate, len(l.DocIDs))
		for i, id := range l.DocIDs {
			d, _ := in.Train.Doc(id)
			cands[i] = rerank.Candidate{Doc: dataset.Doc{ID: id, Title: d.Title, Text: d.Text, Metadata: d.Metadata}}
		}
		ctxFeats, err := qualityContext(ctx, cfg.Context, rerank.Query{ID: l.QueryID, Text: l.Query}, cands)
		if err != nil {
			return spec, err
		}
		for i, c := range cands {
			ex = append(ex, quality.Example{Text: c.FullText(), Context: ctxFeats[i], Good: l.Grades[i] > 0})
		}
	}
	m, err := quality.Train(ctx, ex, cfg)
	if err != nil {
		return spec, err
	}
	return saveModel(spec, in, quality.Method, m.Save)
}
