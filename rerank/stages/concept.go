package stages

import (
	"context"
	"fmt"
	"io"

	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/rerank"
)

// Concept scores candidates by comparing concept vectors (LSA, S2Net,
// DSE): the query's is computed at rerank time, each candidate's is read
// from the index payload its model wrote at index time, or computed from
// the candidate's text when the index has none (no index, or a document
// indexed without the model). Stored vectors from a different model are
// refused when the stage is built.
type Concept struct {
	name    string
	stored  storedPayload
	encoder concept.PayloadEncoder
	dim     int
	// score compares the query and a candidate given their vectors and
	// texts, nil meaning their cosine; textScore says whether it reads
	// the texts.
	score     func(qv, dv []float64, qText, dText string) float64
	textScore bool
}

// conceptModel is what each concept stage type supplies.
type conceptModel interface {
	concept.Embedder
	concept.Bundler
	PayloadEncoder(name string) concept.PayloadEncoder
}

// stageModel loads the model file spec names (relative to env.Dir) with
// read, as rerank.LoadModel does, for the stage type typ; path is the
// file's path, for the caller's errors.
func stageModel[M any](spec rerank.StageSpec, env rerank.Env, typ string, read func(io.Reader, string) (M, error)) (m M, path string, err error) {
	path = spec.ModelFile(env.Dir)
	if path == "" {
		return m, "", &rerank.NeedsModelError{Type: typ}
	}
	m, err = rerank.LoadModel(env, path, read)
	return m, path, err
}

// newConcept builds a concept stage for model m, checking that the
// index's payload (option "payload", default the stage's name, so that two
// stages of one type, e.g. S2Net at two dimensions, store two payloads)
// was written by m. A nil score compares the vectors by their cosine.
func newConcept(spec rerank.StageSpec, env rerank.Env, typ, payload string, m conceptModel, dim int,
	score func(qv, dv []float64, qText, dText string) float64) (*Concept, error) {
	if payload == "" {
		payload = spec.DisplayName(typ)
	}
	s := &Concept{name: spec.DisplayName(typ), encoder: m.PayloadEncoder(payload), dim: dim, score: score}
	var err error
	if s.stored, err = newStoredPayload(env.Payloads, s.encoder); err != nil {
		return nil, err
	}
	return s, nil
}

// Name implements rerank.Stage.
func (s *Concept) Name() string { return s.name }

// ReadsMetadata implements rerank.MetadataReader: the stage reads text
// alone.
func (*Concept) ReadsMetadata() bool { return false }

// PayloadEncoder implements rerank.PayloadStage.
func (s *Concept) PayloadEncoder() rerank.PayloadEncoder { return s.encoder }

// ReadsDocs implements rerank.DocReader: the text is read where the index
// holds no concept vector, or by a score that compares texts too.
func (s *Concept) ReadsDocs(ctx context.Context, ids []string, reads []bool) error {
	if s.textScore {
		return allRead(reads)
	}
	return s.stored.missingIn(ctx, ids, reads)
}

// WindowPayloads implements rerank.PayloadReader: the concept vectors,
// where ReadsDocs reads them.
func (s *Concept) WindowPayloads() (rerank.Payloads, []rerank.PayloadKind) {
	if s.textScore {
		return nil, nil
	}
	return s.stored.windowPayloads()
}

// Score implements rerank.Stage.
func (s *Concept) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	pq, err := s.query(ctx, q)
	if err != nil {
		return nil, err
	}
	qv, qn := pq.v, pq.norm
	out := make([]float64, len(cands))
	buf := make([]float64, s.dim)
	stored, err := s.stored.window(ctx, cands)
	if err != nil {
		return nil, err
	}
	var vecs []*storedVector
	if s.score == nil {
		if vecs, err = decodedWindow(ctx, s.stored, cands, decodeStoredVector); err != nil {
			return nil, err
		}
	}
	done := storedCosines(qv, qn, vecs, out)
	for i, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if done[i] {
			continue
		}
		if s.score == nil && stored[i] != nil {
			if out[i], err = concept.CosineEncoded(qv, qn, stored[i]); err != nil {
				return nil, fmt.Errorf("document %s: %w", c.ID, err)
			}
			continue
		}
		dv, err := s.docVector(buf, c, stored[i])
		if err != nil {
			return nil, err
		}
		if s.score == nil {
			out[i] = concept.Cosine(qv, dv)
		} else {
			out[i] = s.score(qv, dv, q.Text, c.FullText())
		}
	}
	return out, nil
}

// conceptQuery is a query's concept vector and its squared norm.
type conceptQuery struct {
	v    []float64
	norm float64
}

// query returns q's concept vector, once a window (prepared).
func (s *Concept) query(ctx context.Context, q rerank.Query) (conceptQuery, error) {
	return prepared(ctx, s, q, func() (conceptQuery, error) {
		v := s.encoder.Encoder.Embed(q.Text)
		return conceptQuery{v, concept.SquaredNorm(v)}, nil
	})
}

// PrepareQuery implements rerank.QueryPreparer: the query's concept
// vector.
func (s *Concept) PrepareQuery(ctx context.Context, q rerank.Query) { _, _ = s.query(ctx, q) }

// storedCosines sets out[i] to the cosine of qv (squared norm qn) with
// vecs[i], each candidate's decoded stored vector, where it holds one of
// qv's dimension (concept.CosinesStored, sixteen at a time, gathered on
// the stack), and reports where it did.
func storedCosines(qv []float64, qn float64, vecs []*storedVector, out []float64) []bool {
	done := make([]bool, len(out))
	const chunk = 16
	var (
		at  [chunk]int
		xs  [chunk][]float32
		sqs [chunk]float64
		cos [chunk]float64
	)
	n := 0
	flush := func() {
		concept.CosinesStored(qv, qn, xs[:n], sqs[:n], cos[:n])
		for k, i := range at[:n] {
			out[i], done[i] = cos[k], true
		}
		n = 0
	}
	for i, v := range vecs {
		if v != nil && v.x != nil && len(v.x) == len(qv) {
			at[n], xs[n], sqs[n] = i, v.x, v.sq
			if n++; n == chunk {
				flush()
			}
		}
	}
	flush()
	return done
}

// docVector returns c's concept vector: its stored one b, decoded into
// buf, else (b nil) one embedded from its text.
func (s *Concept) docVector(buf []float64, c rerank.Candidate, b []byte) ([]float64, error) {
	if b != nil {
		if err := concept.DecodeVectorTo(buf, b); err != nil {
			return nil, fmt.Errorf("document %s: %w", c.ID, err)
		}
		return buf, nil
	}
	return s.encoder.Encoder.Embed(c.FullText()), nil
}

// storedVector is a stored concept vector decoded (see decodedPayloads):
// its float32 values, as stored, and its squared norm; x is nil for a
// payload that holds no vector, whose scoring then reports why
// (concept.CosineEncoded).
type storedVector struct {
	x  []float32
	sq float64
}

// decodeStoredVector decodes b, a concept vector payload of any dimension.
func decodeStoredVector(b []byte) (*storedVector, int, error) {
	v := &storedVector{}
	if len(b)%4 != 0 {
		return v, 0, nil
	}
	x := make([]float64, len(b)/4)
	if concept.DecodeVectorTo(x, b) != nil {
		return v, 0, nil
	}
	v.x, v.sq = make([]float32, len(x)), concept.SquaredNorm(x)
	for i, f := range x {
		v.x[i] = float32(f) // exact: the values were float32
	}
	return v, 4 * len(x), nil
}
