package stages

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage("rm3", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		if env.Stats == nil {
			return nil, errors.New("rm3 needs collection statistics: build the pipeline against a semrank index with rerank.EnvFor(idx) (index.Open or index.Create), or any Bleve index through rerank.LoadPipeline or offline.Open")
		}
		o := RM3Options{K: 10, Terms: 30, Lambda: 0.5, BM25Options: BM25Options{K1: 1.2, B: 0.75}}
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		s := &RM3{Stats: env.Stats, Payloads: env.Payloads, Analyze: env.Analyze, name: spec.DisplayName("rm3"),
			Docs: o.K, Terms: o.Terms, Lambda: o.Lambda, K1: o.K1, B: o.B}
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("rm3: %w", err)
		}
		return s, nil
	})
}

// RM3Options are the options of an rm3 stage: k (feedback documents,
// default 10), terms (expansion terms, default 30), lambda (the query's
// weight in the mix, default 0.5), and BM25's k1 and b for the scoring.
type RM3Options struct {
	K           int     `yaml:"k"`
	Terms       int     `yaml:"terms"`
	Lambda      float64 `yaml:"lambda"`
	BM25Options `yaml:",inline"`
}

// RM3 reranks candidates by pseudo-relevance feedback: it takes the Docs
// candidates the first stage ranked highest as if they were relevant,
// estimates a relevance model from them, mixes it with the query, and
// scores every candidate by BM25 of that expanded, weighted query. Words
// the top documents share with each other but not with the query (a
// query's "retrieval" brings "search", "index", "document") then count
// for the candidates below them; no judgment is read.
//
// The expanded query is rerank.RelevanceModel's: Lavrenko and Croft's
// (2001) relevance model RM1 from the Docs feedback documents, weighted by
// their first-stage scores, its Terms most probable words kept and mixed
// with the query's own model (RM3, Abdul-Jaleel et al., 2004):
//
//	q'(w) = Lambda · P(w|Q) + (1 − Lambda) · P(w|R)
//
// Lambda 1 scores the query alone, 0 the relevance model alone. A
// candidate's score is Σ_w q'(w) · idf(w) · tf·(k1+1) / (tf + k1·(1 − b +
// b·|d|/avg|d|)), BM25 as the bm25 stage computes it (idf = log(1 + (N −
// df + 0.5)/(df + 0.5)) from Stats, average length over the window), so
// the common words a relevance model favours weigh little. Term counts
// come from the index's terms payload when it has one, else from
// analyzing the text as the index does (Analyze), so expansion terms are
// the index's own. Words are summed in sorted order: scores are the same
// bits on every run. The first stage's own feedback (rerank.Feedback)
// estimates the same model and retrieves the window with it instead.
//
// Options: k (feedback documents, ≥ 1, default 10), terms (expansion
// words kept, ≥ 1, default 30), lambda (0 to 1, default 0.5), k1 and b
// (BM25's, defaults 1.2 and 0.75).
type RM3 struct {
	Stats    rerank.TermStats
	Payloads rerank.Payloads       // may be nil
	Analyze  func(string) []string // as TFIDF's
	Docs     int                   // feedback documents (option k)
	Terms    int                   // expansion words kept
	Lambda   float64               // weight of the original query model
	K1, B    float64
	name     string
}

// check refuses settings that would make scores meaningless or NaN.
func (s *RM3) check() error {
	switch {
	case s.Docs < 1:
		return fmt.Errorf("option k %d: want ≥ 1 feedback documents (default 10)", s.Docs)
	case s.Terms < 1:
		return fmt.Errorf("option terms %d: want ≥ 1 expansion words (default 30)", s.Terms)
	case !(s.Lambda >= 0 && s.Lambda <= 1):
		return fmt.Errorf("option lambda %g: want a number from 0 to 1 (default 0.5)", s.Lambda)
	}
	return BM25Options{K1: s.K1, B: s.B}.check()
}

// Name implements rerank.Stage.
func (s *RM3) Name() string {
	if s.name == "" {
		return "rm3"
	}
	return s.name
}

// ReadsMetadata implements rerank.MetadataReader: the stage reads text
// alone.
func (*RM3) ReadsMetadata() bool { return false }

// WeightedTerm is one word of an expanded query and its weight.
type WeightedTerm = rerank.WeightedTerm

// Expand returns the expanded query model q' for q over cands (see RM3
// and rerank.RelevanceModel), sorted by term; the weights sum to 1 unless
// the query and the feedback documents have no words. counts are the
// candidates' term lists (see termList), in candidate order.
func (s *RM3) Expand(q rerank.Query, cands []rerank.Candidate, counts [][]index.TermCount) []WeightedTerm {
	// The feedback documents: the first-stage top Docs, by rank, then
	// candidate order (a rank of 0, unknown, comes last).
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	rank := func(i int) int {
		if cands[i].Rank <= 0 {
			return math.MaxInt
		}
		return cands[i].Rank
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rank(a), rank(b)) })
	fb := order[:min(s.Docs, len(order))]
	docs := make([][]index.TermCount, len(fb))
	scores := make([]float64, len(fb))
	for j, i := range fb {
		docs[j], scores[j] = counts[i], cands[i].Score
	}
	return rerank.RelevanceModel(tokens(s.Analyze, q.Text), docs, scores, s.Terms, s.Lambda)
}

// Score implements rerank.Stage.
func (s *RM3) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	n, err := s.Stats.DocCount()
	if err != nil {
		return nil, err
	}
	counts := make([][]index.TermCount, len(cands))
	lens := make([]float64, len(cands))
	stored, err := windowTerms(ctx, s.Payloads, cands)
	if err != nil {
		return nil, err
	}
	for i, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if counts[i], err = termList(stored[i], s.Analyze, c); err != nil {
			return nil, err
		}
		lens[i] = float64(totalCount(counts[i]))
	}
	expanded := s.Expand(q, cands, counts)
	idf := make([]float64, len(expanded))
	for j, wt := range expanded {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		df, err := s.Stats.DocFreq(wt.Term)
		if err != nil {
			return nil, err
		}
		// A term counted in more documents than the index holds (stale
		// statistics) gets no weight rather than a negative one.
		idf[j] = math.Log(1 + max(float64(n)-float64(df)+0.5, 0)/(float64(df)+0.5))
	}
	weights := make([]float64, len(expanded))
	for j, wt := range expanded {
		weights[j] = wt.Weight
	}
	tfs := make([][]int, len(cands))
	for i := range cands {
		tfs[i] = make([]int, len(expanded))
		for j, wt := range expanded {
			tfs[i][j] = countOf(counts[i], wt.Term)
		}
	}
	return okapi(tfs, lens, idf, weights, s.K1, s.B), nil
}

// countOf returns how often term occurs in a sorted term list.
func countOf(list []index.TermCount, term string) int {
	if i, ok := slices.BinarySearchFunc(list, term, func(tc index.TermCount, t string) int { return strings.Compare(tc.Term, t) }); ok {
		return list[i].Count
	}
	return 0
}

// totalCount returns the number of tokens a term list counts.
func totalCount(list []index.TermCount) int {
	n := 0
	for _, tc := range list {
		n += tc.Count
	}
	return n
}
