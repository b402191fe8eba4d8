package stages

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage("meta", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		o := MetaOptions{Transform: "identity"}
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		field, tr, def := o.Field, o.Transform, o.Default
		if field == "" {
			return nil, errors.New(`meta needs option "field" (a metadata key, e.g. position)`)
		}
		switch tr {
		case "identity", "neglog", "negate":
		default:
			return nil, fmt.Errorf("meta: unknown transform %q (identity, negate, neglog)", tr)
		}
		if math.IsNaN(def) || math.IsInf(def, 0) {
			return nil, fmt.Errorf("meta: option default %g is not a finite number", def)
		}
		name := spec.Name
		if name == "" {
			name = "meta:" + field
		}
		return &Meta{name: name, Field: field, Transform: tr, Default: def}, nil
	})
}

// MetaOptions are the options of a meta stage: the metadata field scored
// (required), its transform (identity, negate or neglog) and the score
// of a candidate without it (default 0).
type MetaOptions struct {
	Field     string  `yaml:"field"`
	Transform string  `yaml:"transform"`
	Default   float64 `yaml:"default"`
}

// Meta turns a document metadata value into a score: a number, a boolean
// (1 or 0) or a numeric string, optionally negated or mapped to −log(1+x).
// Forum metadata is signal a reranker may use — in SemEval subtask A, a
// comment written by the question's own author is rarely a good answer,
// and early comments are more often good than late ones. Options: field
// (required), transform (identity, negate, neglog) and default. The field
// is not checked against the index: metadata keys depend on the data, so a
// misspelt field is not an error, and every candidate scores default.
type Meta struct {
	name      string
	Field     string
	Transform string
	Default   float64 // for candidates without the field
}

// Name implements rerank.Stage.
func (m *Meta) Name() string { return m.name }

// Score implements rerank.Stage.
func (m *Meta) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	out := make([]float64, len(cands))
	for i, c := range cands {
		v, ok := numeric(c.Metadata[m.Field])
		if !ok {
			out[i] = m.Default
			continue
		}
		switch m.Transform {
		case "negate":
			v = -v
		case "neglog":
			v = -math.Log1p(math.Max(v, 0))
		}
		out[i] = v
	}
	return out, nil
}

// numeric reads a metadata value as a finite number; NaN and infinities
// (strings such as "NaN", which tools write for missing numbers) count as
// missing, since no stage score or thread position may be non-finite.
func numeric(v any) (float64, bool) {
	f, ok := numericValue(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func numericValue(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case int:
		return float64(t), true
	case bool:
		if t {
			return 1, true
		}
		return 0, true
	case string:
		f, err := strconv.ParseFloat(t, 64)
		return f, err == nil
	}
	return 0, false
}
