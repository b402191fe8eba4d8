package stages

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage("proximity", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		if env.Stats == nil {
			return nil, errors.New("proximity needs collection statistics: build the pipeline against a semrank index with rerank.EnvFor(idx) (index.Open or index.Create), or any Bleve index through rerank.LoadPipeline or offline.Open")
		}
		o := ProximityOptions{Alpha: 0.3, BM25: true, BM25Options: BM25Options{K1: 1.2, B: 0.75}}
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		s := &Proximity{Analyze: env.Analyze, Alpha: o.Alpha, name: spec.DisplayName("proximity")}
		if o.BM25 {
			s.BM25 = &BM25{Stats: env.Stats, Payloads: env.Payloads, Analyze: env.Analyze, K1: o.K1, B: o.B}
		}
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("proximity: %w", err)
		}
		return s, nil
	})
}

// ProximityOptions are the options of a proximity stage: alpha (Tao and
// Zhai's α, default 0.3), bm25 (add the proximity to BM25, default true),
// and BM25's k1 and b.
type ProximityOptions struct {
	Alpha       float64 `yaml:"alpha"`
	BM25        bool    `yaml:"bm25"`
	BM25Options `yaml:",inline"`
}

// Proximity scores candidates by how close together the query's terms
// occur in them: Tao and Zhai's best measure ("An exploration of
// proximity measures in information retrieval", SIGIR 2007), the minimum
// pair distance MinDist, δ(Q, D) = the least distance between
// occurrences of two distinct query terms in D, turned into a bounded
// bonus and added to BM25:
//
//	R(Q, D) = BM25(Q, D) + π(Q, D),  π(Q, D) = log(α + exp(−δ(Q, D)))
//
// with α = 0.3, the paper's setting. π lies between log α (terms far
// apart) and log(α + 1/e) (adjacent), a spread of at most 0.8: it
// reorders documents BM25 scores alike. Where fewer than
// two distinct query terms occur in D there is no pair, δ is infinite
// and π is log α, as for terms very far apart: a short document holding
// one query term is not taken for one holding two side by side.
//
// Positions are those of the candidate's title and text analyzed as the
// index analyzes them (Analyze): the nth term the analyzer keeps is at
// position n, so words it drops (stop words) do not count in a distance.
// BM25 is the bm25 stage's (raw term counts, idf from the index, average
// length over the window). With BM25 nil (option bm25: false) the stage
// scores π alone, for fusions that hold bm25 already.
//
// Options: alpha (> 0, default 0.3), bm25 (default true), k1 and b
// (BM25's, defaults 1.2 and 0.75).
type Proximity struct {
	BM25    *BM25                 // may be nil: π alone
	Analyze func(string) []string // as TFIDF's
	Alpha   float64
	name    string
}

// check refuses settings that would make scores meaningless or NaN.
func (s *Proximity) check() error {
	if !(s.Alpha > 0) || math.IsInf(s.Alpha, 0) {
		return fmt.Errorf("option alpha %g: want a finite number > 0 (default 0.3)", s.Alpha)
	}
	if s.BM25 != nil {
		return BM25Options{K1: s.BM25.K1, B: s.BM25.B}.check()
	}
	return nil
}

// Name implements rerank.Stage.
func (s *Proximity) Name() string {
	if s.name == "" {
		return "proximity"
	}
	return s.name
}

// ReadsMetadata implements rerank.MetadataReader: the stage reads text
// alone.
func (*Proximity) ReadsMetadata() bool { return false }

// Score implements rerank.Stage.
func (s *Proximity) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	out := make([]float64, len(cands))
	if s.BM25 != nil {
		bm, err := s.BM25.Score(ctx, q, cands)
		if err != nil {
			return nil, err
		}
		copy(out, bm)
	}
	terms := slices.Clone(tokens(s.Analyze, q.Text))
	slices.Sort(terms)
	terms = slices.Compact(terms)
	for i, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		delta := math.Inf(1)
		if d, ok := minDist(tokens(s.Analyze, c.FullText()), terms); ok {
			delta = float64(d)
		}
		out[i] += proximityBonus(delta, s.Alpha)
	}
	return out, nil
}

// proximityBonus is Tao and Zhai's π = log(α + exp(−δ)) for a minimum
// pair distance δ (+Inf: no pair).
func proximityBonus(delta, alpha float64) float64 {
	return math.Log(alpha + math.Exp(-delta))
}

// minDist returns the least distance between occurrences of two distinct
// terms of terms (sorted, distinct) in doc, the nth element of doc at
// position n, and whether two of them occur at all. One pass: at each
// occurrence the nearest earlier occurrence of every other term is the
// last one seen, so it takes O(len(doc)·len(terms)) time.
func minDist(doc, terms []string) (int, bool) {
	last := make([]int, len(terms))
	for j := range last {
		last[j] = -1
	}
	best := -1
	for p, t := range doc {
		j, ok := slices.BinarySearch(terms, t)
		if !ok {
			continue
		}
		for k, l := range last {
			if k != j && l >= 0 && (best < 0 || p-l < best) {
				best = p - l
			}
		}
		last[j] = p
	}
	if best < 0 {
		return 0, false
	}
	return best, true
}
