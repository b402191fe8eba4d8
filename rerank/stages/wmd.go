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
		return &WMD{Space: space}, nil
	})
}

// WMDOptions are the options of a wmd stage: the format of its word
// vectors file (default auto), and its trainer's (see EmbedOptions).
type WMDOptions struct {
	Format       string `yaml:"format"`
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
func windowDistances(ctx context.Context, space *wmd.Space, query string, docs func() []wmd.Doc) ([]float64, error) {
	type key struct {
		space *wmd.Space
		query string
	}
	v, err := rerank.WindowMemoOf(ctx).Do(key{space, query}, func() (any, error) {
		qd := space.Doc(query)
		if qd.Empty() {
			return []float64(nil), nil
		}
		ds := docs()
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
// A candidate's nBOW (its tokenization, once most of the stage's cost) is
// cached by text across queries; Space must not change once the stage
// has scored. A query's distances to its candidates are solved together
// (wmd.Index.Distances: each word distance once, on every core).
type WMD struct {
	Space *wmd.Space

	once sync.Once
	docs *textcache.Cache[wmd.Doc]
}

// nbows returns the nBOWs of texts in s.Space, from the cache where a
// text was seen recently, the others computed on every core.
func (s *WMD) nbows(texts []string) []wmd.Doc {
	s.once.Do(func() { s.docs = textcache.New(s.Space.Doc) })
	return s.docs.GetAll(texts)
}

// Name implements rerank.Stage.
func (*WMD) Name() string { return "wmd" }

// ReadsMetadata implements rerank.MetadataReader: the stage reads text
// alone.
func (*WMD) ReadsMetadata() bool { return false }

// Score implements rerank.Stage.
func (s *WMD) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	out := make([]float64, len(cands))
	dist, err := windowDistances(ctx, s.Space, q.Text, func() []wmd.Doc {
		texts := make([]string, len(cands))
		for i, c := range cands {
			texts[i] = c.FullText()
		}
		return s.nbows(texts)
	})
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
