package stages

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/semrank/semrank/internal/textcache"
	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/models/wmd"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage("wmd", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		var o WMDOptions
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		space, err := loadSpace(spec, env, o.Format)
		if err != nil {
			return nil, err
		}
		return NewWMD(space, o.Payload, env.Payloads)
	})
}

// WMDOptions are the options of a wmd stage: the format of its word
// vectors file (default auto), the payload its candidates' nBOWs are
// stored under (default "nbow"), and its trainer's (see EmbedOptions).
type WMDOptions struct {
	Format       string `yaml:"format"`
	Payload      string `yaml:"payload"`
	EmbedOptions `yaml:",inline"`
}

// loadSpace loads the word vectors a stage's model names (an embed bundle,
// or a word2vec/GloVe file with option "format").
func loadSpace(spec rerank.StageSpec, env rerank.Env, format string) (*wmd.Space, error) {
	path := spec.ModelFile(env.Dir)
	if path == "" {
		return nil, &rerank.NeedsModelError{Type: spec.Type, What: "word vectors as its model"}
	}
	if format == "" {
		format = string(embed.FormatAuto)
	}
	// Stages naming the same vectors (wmd and ssg) share one Space, and
	// through it a window's query distances (windowDistances).
	type key struct{ path, format string }
	v, err := env.Shared(key{path, format}, func() (any, error) {
		v, err := rerank.LoadModel(env, path, func(r io.Reader, name string) (*embed.Vectors, error) {
			return embed.ReadFormat(r, name, embed.Format(format))
		})
		if err != nil {
			return nil, err
		}
		return wmd.NewSpace(v), nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*wmd.Space), nil
}

// WordSpace returns the word vectors that spec, a wmd or ssg stage's,
// names, loaded as the stage loads them (shared with stages built in the
// same env), without the rest of the stage: the space an ssg stage's
// neighbour lists are computed in.
func WordSpace(spec rerank.StageSpec, env rerank.Env) (*wmd.Space, error) {
	var format string
	switch spec.Type {
	case "wmd":
		var o WMDOptions
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		format = o.Format
	case "ssg":
		var o SSGOptions
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		format = o.Format
	default:
		return nil, fmt.Errorf("stage %s: a %s stage reads no word vectors (wmd and ssg do)", spec.DisplayName(spec.Type), spec.Type)
	}
	return loadSpace(spec, env, format)
}

// windowDistances returns the WMD from query to each of docs, the window's
// candidates' nBOWs in space (wmd.Index.Distances), or nil when the query
// has no word with a vector: once per window for the stages sharing space
// (wmd and ssg; rerank.WindowMemo).
func windowDistances(ctx context.Context, space *wmd.Space, query string, docs func() ([]wmd.Doc, error)) ([]float64, error) {
	type key struct {
		space *wmd.Space
		query string
	}
	v, err := rerank.WindowMemoOf(ctx).Do(key{space, query}, func() (any, error) {
		qd := space.Doc(query)
		if qd.Empty() {
			return []float64(nil), nil
		}
		ds, err := docs()
		if err != nil {
			return nil, err
		}
		all := make([]int, len(ds))
		for i := range all {
			all[i] = i
		}
		return space.NewIndex(ds).Distances(ctx, qd, all)
	})
	if err != nil {
		return nil, err
	}
	return v.([]float64), nil
}

// WMD scores candidates by their negative Word Mover's Distance to the
// query (Kusner et al., 2015), solved exactly. A candidate with no word
// that has a vector scores below every other; a query with none leaves all
// candidates tied at 0. When the spec names no vectors, rerank.TrainStage
// (as recipes call it) trains them from unlabeled in-domain text:
// TrainInput.Text, or else the training set's documents and queries; no
// judgment is used. Training options embed_dim, embed_window,
// embed_negative, embed_epochs (default 10), embed_min_count (default 5),
// embed_prune_top and embed_sample otherwise default as in semrank train
// embed. The vectors are written into TrainInput.Dir under a name
// fingerprinting the settings and the text, so stages trained on the same
// text with the same settings share one file.
//
// A candidate's nBOW is read from the index's "nbow" payload (option
// "payload" names another; wmd.Encoder), written at index time in the
// stage's vectors, where the index holds one: the search then loads
// neither the document's stored text nor tokenizes it. Otherwise it is
// computed from the candidate's title and text; both give the same nBOW,
// bit for bit. Either way it is cached across queries (by payload or by
// text); Space must not change once the stage has scored. A query's
// distances to its candidates are solved together (wmd.Index.Distances:
// each word distance once, on every core).
type WMD struct {
	Space *wmd.Space

	encoder rerank.PayloadEncoder
	stored  storedPayload

	once  sync.Once
	docs  *textcache.Cache[wmd.Doc]  // by text
	coded *textcache.Cache[codedDoc] // by payload
}

// codedDoc is an nBOW decoded from its payload, or the payload's error.
type codedDoc struct {
	doc wmd.Doc
	err error
}

// NewWMD returns the stage over space, its candidates' nBOWs read from
// payloads (under payload, "nbow" when empty) where the index holds
// them. An index whose payload of that name other vectors wrote is an
// error naming both.
func NewWMD(space *wmd.Space, payload string, payloads rerank.Payloads) (*WMD, error) {
	s := &WMD{Space: space, encoder: payloadNamed(payload, wmd.Encoder{Space: space})}
	var err error
	if s.stored, err = newStoredPayload(payloads, s.encoder); err != nil {
		return nil, err
	}
	return s, nil
}

// caches makes the stage's caches of nBOWs by text and by payload.
func (s *WMD) caches() {
	s.once.Do(func() {
		s.docs = textcache.New(s.Space.Doc)
		s.coded = textcache.New(func(b string) codedDoc {
			d, err := s.Space.DecodeDoc([]byte(b))
			return codedDoc{d, err}
		})
	})
}

// nbows returns the nBOWs of cands in s.Space: from their payloads where
// the index holds them, else from their text, from the caches where seen
// recently, the others computed on every core.
func (s *WMD) nbows(ctx context.Context, cands []rerank.Candidate) ([]wmd.Doc, error) {
	s.caches()
	stored, err := s.stored.window(ctx, cands)
	if err != nil {
		return nil, err
	}
	out := make([]wmd.Doc, len(cands))
	var texts, codes []string
	var byText, byCode []int
	for i, c := range cands {
		if stored[i] != nil {
			codes, byCode = append(codes, string(stored[i])), append(byCode, i)
		} else {
			texts, byText = append(texts, c.FullText()), append(byText, i)
		}
	}
	for k, d := range s.coded.GetAll(codes) {
		if d.err != nil {
			return nil, fmt.Errorf("document %s: %w", cands[byCode[k]].ID, d.err)
		}
		out[byCode[k]] = d.doc
	}
	for k, d := range s.docs.GetAll(texts) {
		out[byText[k]] = d
	}
	return out, nil
}

// PayloadEncoder implements rerank.PayloadStage: each document's nBOW.
func (s *WMD) PayloadEncoder() rerank.PayloadEncoder { return s.encoder }

// ReadsDocs implements rerank.DocReader: the documents without a payload.
func (s *WMD) ReadsDocs(ctx context.Context, ids []string, reads []bool) error {
	return s.stored.missingIn(ctx, ids, reads)
}

// WindowPayloads implements rerank.PayloadReader: the nBOWs.
func (s *WMD) WindowPayloads() (rerank.Payloads, []rerank.PayloadKind) {
	return s.stored.windowPayloads()
}

// Name implements rerank.Stage.
func (*WMD) Name() string { return "wmd" }

// ReadsMetadata implements rerank.MetadataReader: the stage reads text
// alone.
func (*WMD) ReadsMetadata() bool { return false }

// Score implements rerank.Stage.
func (s *WMD) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	out := make([]float64, len(cands))
	dist, err := windowDistances(ctx, s.Space, q.Text, func() ([]wmd.Doc, error) { return s.nbows(ctx, cands) })
	if err != nil {
		return nil, err
	}
	if dist == nil {
		return out, nil
	}
	lo := 0.0
	for i, d := range dist {
		out[i] = -d
		if !math.IsInf(d, 1) {
			lo = min(lo, -d)
		}
	}
	for i, x := range out {
		if math.IsInf(x, -1) {
			out[i] = lo - 1
		}
	}
	return out, nil
}
