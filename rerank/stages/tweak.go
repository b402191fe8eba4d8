package stages

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage(tweak.Method, func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		o := DefaultTweakOptions()
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		m, _, err := stageModel(spec, env, tweak.Method, tweak.Read)
		if err != nil {
			return nil, err
		}
		return newTWEAK(spec.Name, m, payloadNamed(o.Payload, tweak.NewEncoder(m)), env.Payloads)
	})
}

// TweakOptions are the options of a tweak stage: the payload its
// vectors are stored under (default "tweak"), and its trainer's (see
// fitTWEAK), which semrank train tweak's flags fill too.
type TweakOptions struct {
	Payload  string     `yaml:"payload"`
	Loss     string     `yaml:"loss"`
	Alpha    TweakAlpha `yaml:"alpha"`
	QueryLog bool       `yaml:"query_log"`
	MaxIter  int        `yaml:"max_iter"`
	DF       string     `yaml:"df"`
}

// DefaultTweakOptions returns the options a tweak stage takes when its
// spec gives none.
func DefaultTweakOptions() TweakOptions {
	return TweakOptions{Loss: string(tweak.LossSSE), Alpha: TweakAlpha{Alpha: 0.1}, QueryLog: true, MaxIter: 200, DF: "corpus"}
}

// TweakAlpha is TWEAK's L2 weight α, a number ≥ 0, or auto: chosen by dev
// MAP (see fitTWEAK). It reads and writes "auto" or the number, in YAML
// and as a flag value.
type TweakAlpha struct {
	Alpha float64
	Auto  bool
}

// String returns "auto" or α.
func (a TweakAlpha) String() string {
	if a.Auto {
		return "auto"
	}
	return strconv.FormatFloat(a.Alpha, 'g', -1, 64)
}

// Set sets a from "auto" or a number ≥ 0.
func (a *TweakAlpha) Set(s string) error {
	if s == "auto" {
		*a = TweakAlpha{Auto: true}
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f >= 0) {
		return fmt.Errorf("want a non-negative number or auto, got %q", s)
	}
	*a = TweakAlpha{Alpha: f}
	return nil
}

// Type names the flag value's type.
func (a *TweakAlpha) Type() string { return "string" }

// UnmarshalYAML reads auto or a number ≥ 0.
func (a *TweakAlpha) UnmarshalYAML(n *yaml.Node) error {
	var f float64
	switch {
	case n.Tag == "!!str" && n.Value == "auto":
		*a = TweakAlpha{Auto: true}
		return nil
	case (n.Tag == "!!int" || n.Tag == "!!float") && n.Decode(&f) == nil && f >= 0:
		*a = TweakAlpha{Alpha: f}
		return nil
	}
	return fmt.Errorf("want a non-negative number or auto, got %s", n.Value)
}

// MarshalYAML writes auto or α.
func (a TweakAlpha) MarshalYAML() (any, error) {
	if a.Auto {
		return "auto", nil
	}
	return a.Alpha, nil
}

// TWEAK scores candidates by the cosine of the query's and the candidate's
// learned term-weight vectors (models/tweak). A candidate's vector is read
// from the index's "tweak" payload (option "payload" names another),
// computed at index time, when the index has one, and computed from the candidate's title and text otherwise (no
// index, a candidate file, or a document indexed without the model); both
// give the same weights, since the model carries its own document
// frequencies.
type TWEAK struct {
	name    string
	model   *tweak.Model
	encoder rerank.PayloadEncoder
	stored  storedPayload
}

// NewTWEAK returns the stage for m. When payloads holds TWEAK vectors
// written by another model, it refuses, naming both models.
func NewTWEAK(name string, m *tweak.Model, payloads rerank.Payloads) (*TWEAK, error) {
	return newTWEAK(name, m, tweak.NewEncoder(m), payloads)
}

func newTWEAK(name string, m *tweak.Model, enc rerank.PayloadEncoder, payloads rerank.Payloads) (*TWEAK, error) {
	if name == "" {
		name = tweak.Method
	}
	s := &TWEAK{name: name, model: m, encoder: enc}
	var err error
	if s.stored, err = newStoredPayload(payloads, enc); err != nil {
		return nil, err
	}
	return s, nil
}

// Name implements rerank.Stage.
func (s *TWEAK) Name() string { return s.name }

// ReadsMetadata implements rerank.MetadataReader: the stage reads text
// alone.
func (*TWEAK) ReadsMetadata() bool { return false }

// PayloadEncoder implements rerank.PayloadStage.
func (s *TWEAK) PayloadEncoder() rerank.PayloadEncoder { return s.encoder }

// QueryWeights implements rerank.QueryWeighter: the learned query term
// weights, for boosting first-stage terms.
func (s *TWEAK) QueryWeights(text string) map[string]float64 { return s.model.QueryWeights(text) }

// ReadsDocs implements rerank.DocReader: the text is read where the index
// holds no document vector.
func (s *TWEAK) ReadsDocs(ctx context.Context, ids []string, reads []bool) error {
	return s.stored.missingIn(ctx, ids, reads)
}

// WindowPayloads implements rerank.PayloadReader: the document vectors.
func (s *TWEAK) WindowPayloads() (rerank.Payloads, []rerank.PayloadKind) {
	return s.stored.windowPayloads()
}

// Score implements rerank.Stage. A stored vector is scored from its term
// table (see termTable): its terms found by the query's, its norm summed
// once, to the bit tweak.CosineEncoded's cosine.
func (s *TWEAK) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	pq, err := s.query(ctx, q)
	if err != nil {
		return nil, err
	}
	qv, qt, qn := pq.v, pq.terms, pq.norm
	out := make([]float64, len(cands))
	tabs, err := s.stored.tables(ctx, cands, tweak.EachWeight)
	if err != nil {
		return nil, err
	}
	vals, found := make([]float64, len(qv.Terms)), make([]bool, len(qv.Terms))
	for i, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if tab := tabs[i]; tab != nil {
			out[i] = tableCosine(qv, qt, qn, tab, vals, found)
			continue
		}
		out[i] = tweak.Cosine(qv, s.model.DocVector(c.Title, c.Text))
	}
	return out, nil
}

// tweakQuery is a query's TWEAK vector, its terms prepared for lookups
// (their scratch space is the one Score's) and its norm.
type tweakQuery struct {
	v     tweak.Vector
	terms *queryTerms
	norm  float64
}

// query returns q's vector, once a window (prepared).
func (s *TWEAK) query(ctx context.Context, q rerank.Query) (tweakQuery, error) {
	return prepared(ctx, s, q, func() (tweakQuery, error) {
		v := s.model.QueryVector(q.Text)
		return tweakQuery{v, newQueryTerms(v.Terms), v.Norm()}, nil
	})
}

// PrepareQuery implements rerank.QueryPreparer: the query's vector.
func (s *TWEAK) PrepareQuery(ctx context.Context, q rerank.Query) { _, _ = s.query(ctx, q) }

// tableCosine is tweak.CosineEncoded(q, b) for tab, b's table, given q's
// terms prepared for lookups and q's norm: the same products summed in
// the same (term) order. vals and found are scratch space as long as
// q's terms.
func tableCosine(q tweak.Vector, qt *queryTerms, qn float64, tab *termTable, vals []float64, found []bool) float64 {
	tab.values(qt, vals, found)
	dot := 0.0
	for j, w := range vals {
		if found[j] {
			dot += q.Weights[j] * w
		}
	}
	n := qn * math.Sqrt(tab.sq)
	if n == 0 {
		return 0
	}
	return dot / n
}
