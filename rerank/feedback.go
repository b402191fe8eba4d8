package rerank

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/index"
)

// Feedback configures first-stage pseudo-relevance feedback (RM3 with
// re-retrieval, as in Anserini's BM25+RM3): the first-stage query is
// searched for its top Docs documents, a relevance model is estimated
// from them (RelevanceModel), and the window is then retrieved from the
// whole index by the expanded query, the query's words and the Terms
// feedback words as one disjunction of term queries boosted by their
// weights in the mixed model. Zero values take the defaults.
//
//	first_stage:
//	  feedback: {docs: 10, terms: 30, lambda: 0.5}
type Feedback struct {
	// Docs is the number of feedback documents, from 1 to MaxFeedback;
	// 10 when 0.
	Docs int `yaml:"docs,omitempty" json:"docs,omitempty"`
	// Terms is the number of feedback words kept, from 1 to
	// MaxFeedback; 30 when 0.
	Terms int `yaml:"terms,omitempty" json:"terms,omitempty"`
	// Lambda is the original query's weight in the mix, from 0 to 1;
	// 0.5 when unset.
	Lambda *float64 `yaml:"lambda,omitempty" json:"lambda,omitempty"`
	// IDF says how often a term's idf weighs it in the expanded query.
	// Bleve's BM25 multiplies a term query's score by its idf twice (in
	// the query weight and in the field weight); with IDFBleve, the
	// default, each term's boost is its weight, so the expanded query is
	// scored as Bleve scores its own queries. With IDFOnce the boost is
	// the weight divided by the term's idf, so each term weighs
	// weight·idf, as textbook BM25 (and Anserini's RM3) has it.
	IDF string `yaml:"idf,omitempty" json:"idf,omitempty"`
	// MinOverlap, when above 0, guards each query: the expanded query
	// retrieves the window only when at least this share of its own top
	// Docs documents are feedback documents, else the first stage's
	// query does, unexpanded. It is Zhou and Croft's query-feedback
	// predictor: where the expanded query still finds what the query
	// found, the feedback documents agree on its topic; where it finds
	// other documents, the expansion has drifted. From 0 to 1; 0, the
	// default, expands every query.
	MinOverlap float64 `yaml:"min_overlap,omitempty" json:"min_overlap,omitempty"`
	// Scope says where the expanded query retrieves the window from:
	// ScopeIndex, the default, the whole index; ScopeQuery, only the
	// documents the first-stage query matches, each scored by that query
	// and the expanded one together. Re-retrieval from the whole index
	// lets in documents holding feedback words alone, the loss of
	// re-retrieval on most collections of docs/RESULTS.md; within the
	// query's matches the window still reaches past BM25's top documents
	// but keeps the query's words.
	Scope string `yaml:"scope,omitempty" json:"scope,omitempty"`
}

// The values of Feedback.Scope.
const (
	ScopeIndex = "index"
	ScopeQuery = "query"
)

// The values of Feedback.IDF.
const (
	IDFBleve = "bleve"
	IDFOnce  = "once"
)

// MaxFeedback bounds Feedback's Docs and Terms: each feedback document's
// terms are read at every search, and each kept word is a clause of the
// window's query.
const MaxFeedback = 1000

// withDefaults returns f with its zero values set to the defaults.
func (f Feedback) withDefaults() Feedback {
	if f.Docs == 0 {
		f.Docs = 10
	}
	if f.Terms == 0 {
		f.Terms = 30
	}
	if f.Lambda == nil {
		half := 0.5
		f.Lambda = &half
	}
	if f.IDF == "" {
		f.IDF = IDFBleve
	}
	if f.Scope == "" {
		f.Scope = ScopeIndex
	}
	return f
}

// check refuses settings that mean nothing.
func (f Feedback) check() error {
	switch {
	case f.Docs < 0 || f.Docs > MaxFeedback:
		return fmt.Errorf("first_stage.feedback.docs %d: want 1 to %d feedback documents (0 means the default, 10)", f.Docs, MaxFeedback)
	case f.Terms < 0 || f.Terms > MaxFeedback:
		return fmt.Errorf("first_stage.feedback.terms %d: want 1 to %d feedback words (0 means the default, 30)", f.Terms, MaxFeedback)
	case f.Lambda != nil && !(*f.Lambda >= 0 && *f.Lambda <= 1):
		return fmt.Errorf("first_stage.feedback.lambda %g: want the query's weight, from 0 to 1 (default 0.5)", *f.Lambda)
	case f.IDF != "" && f.IDF != IDFBleve && f.IDF != IDFOnce:
		return fmt.Errorf("first_stage.feedback.idf %q: want %s (the default) or %s", f.IDF, IDFBleve, IDFOnce)
	case f.Scope != "" && f.Scope != ScopeIndex && f.Scope != ScopeQuery:
		return fmt.Errorf("first_stage.feedback.scope %q: want %s (the default: the whole index) or %s (the documents the query matches)", f.Scope, ScopeIndex, ScopeQuery)
	case !(f.MinOverlap >= 0 && f.MinOverlap <= 1):
		return fmt.Errorf("first_stage.feedback.min_overlap %g: want the share of the expanded query's top documents that must be feedback documents, from 0 to 1 (0, the default, expands every query)", f.MinOverlap)
	}
	return nil
}

// WeightedTerm is one word of an expanded query and its weight.
type WeightedTerm struct {
	Term   string
	Weight float64
}

// RelevanceModel returns the expanded query model of Lavrenko and Croft's
// RM3 for the query's analyzed words query and the feedback documents
// docs (each a term list in sorted order, as index.DecodeTermList gives
// it), sorted by term; the weights sum to 1 unless the query and the
// documents have no words.
//
// The relevance model is RM1,
//
//	P(w|R) ∝ Σ_d P(w|d) · P(q|d)
//
// with P(w|d) = tf(w,d)/|d| (maximum likelihood, as in Anserini's RM3)
// and P(q|d) the document's first-stage score (scores[i]) divided by the
// feedback documents' total. The scores stand for the query likelihood
// the paper uses, which BM25 does not give; when they cannot (a negative,
// non-finite or all-zero score), every document weighs the same. Only the
// terms most probable words are kept, ties broken by the word, and
// renormalised. RM3 (Abdul-Jaleel et al., 2004) then interpolates with
// the query's own model, P(w|Q) = count/|Q|:
//
//	q'(w) = lambda · P(w|Q) + (1 − lambda) · P(w|R)
//
// Sums run in term order, so the weights are the same bits on every run.
func RelevanceModel(query []string, docs [][]index.TermCount, scores []float64, terms int, lambda float64) []WeightedTerm {
	qModel := map[string]float64{}
	for _, t := range query {
		qModel[t] += 1 / float64(len(query))
	}
	weights := make([]float64, len(docs))
	total, usable := 0.0, true
	for j, sc := range scores[:len(docs)] {
		if sc < 0 || math.IsNaN(sc) || math.IsInf(sc, 0) {
			usable = false
		}
		weights[j] = sc
		total += sc
	}
	if !usable || total == 0 || math.IsInf(total, 0) {
		for j := range weights {
			weights[j] = 1
		}
		total = float64(len(weights))
	}
	// RM1: Σ_d P(w|d) P(q|d), each document's terms in sorted order.
	rel := map[string]float64{}
	for j, list := range docs {
		length := 0
		for _, tc := range list {
			length += tc.Count
		}
		if length == 0 {
			continue
		}
		pq := weights[j] / total
		for _, tc := range list {
			rel[tc.Term] += float64(tc.Count) / float64(length) * pq
		}
	}
	kept := make([]WeightedTerm, 0, len(rel))
	for _, t := range slices.Sorted(maps.Keys(rel)) {
		kept = append(kept, WeightedTerm{t, rel[t]})
	}
	slices.SortStableFunc(kept, func(a, b WeightedTerm) int { return cmp.Compare(b.Weight, a.Weight) }) // by weight, then term
	kept = kept[:min(terms, len(kept))]
	relSum := 0.0
	for _, tw := range kept {
		relSum += tw.Weight
	}
	// RM3: the interpolation, in term order.
	expanded := map[string]float64{}
	if relSum == 0 {
		lambda = 1 // no feedback words: the query alone
	} else if len(query) == 0 {
		lambda = 0 // no query words: the relevance model alone
	}
	for t, p := range qModel {
		expanded[t] += lambda * p
	}
	for _, tw := range kept {
		expanded[tw.Term] += (1 - lambda) * tw.Weight / relSum
	}
	out := make([]WeightedTerm, 0, len(expanded))
	for _, t := range slices.Sorted(maps.Keys(expanded)) {
		if w := expanded[t]; w > 0 {
			out = append(out, WeightedTerm{t, w})
		}
	}
	return out
}

// feedback is a pipeline's first-stage feedback, built against its index.
type feedback struct {
	Feedback // with its defaults
	// fields are those the expanded query's term queries match: the
	// fields the first stage searches from text.
	fields   []string
	payloads Payloads              // the index's terms payload, if any
	tokens   func(string) []string // Env.Tokens: text analyzed as the index analyzed the stages' fields
	stats    TermStats             // for IDFOnce
}

// newFeedback returns f built against env, whose first stage from text
// matches fields (semrank's _all when empty and the index is semrank's,
// else the mapping's default search field).
func newFeedback(f Feedback, env Env, fields FieldList, semrank bool) (*feedback, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	fb := &feedback{Feedback: f.withDefaults(), payloads: env.Payloads, tokens: env.Tokens, stats: env.Stats}
	if fb.IDF == IDFOnce && fb.stats == nil {
		return nil, errors.New("first_stage.feedback.idf once needs the index's statistics: build the pipeline against its index (rerank.EnvOf)")
	}
	switch {
	case len(fields) > 0:
		fb.fields = fields
	case semrank || env.Index == nil:
		fb.fields = []string{index.FieldAll}
	default:
		fb.fields = []string{env.Index.Mapping().DefaultSearchField()}
	}
	return fb, nil
}

// expand returns the query that retrieves the window for q, the
// first-stage query of a search for text (see Feedback): q itself
// without feedback, when text has no words or q finds nothing, and when
// the guard (Feedback.MinOverlap) finds the expansion drifted. The
// expanded query retrieves from the whole index only when q asks for its
// words and nothing more (see wordsOnly) and the scope is the index; a
// query that also restricts (a filter, a conjunction, a negation, another
// field), or any query with the scope ScopeQuery, must still match every
// window document, and the expanded words then rescore its matches.
func (p *Pipeline) expand(ctx context.Context, idx bleve.Index, q query.Query, text string) (query.Query, error) {
	fb := p.feedback
	if fb == nil || q == nil {
		return q, nil
	}
	qTokens := fb.tokens(text)
	if len(qTokens) == 0 {
		return q, nil
	}
	req := bleve.NewSearchRequestOptions(q, fb.Docs, 0, false)
	res, err := index.SearchTiesByID(ctx, idx, req, fb.Docs)
	if err != nil {
		return nil, err
	}
	hits := res.Hits[:min(fb.Docs, len(res.Hits))]
	if len(hits) == 0 {
		return q, nil
	}
	index.StableOrder(hits)
	docs, err := fb.termLists(ctx, idx, p.Fields, hits)
	if err != nil {
		return nil, err
	}
	scores := make([]float64, len(hits))
	for i, h := range hits {
		scores[i] = h.Score
	}
	terms := RelevanceModel(qTokens, docs, scores, fb.Terms, *fb.Lambda)
	if len(terms) == 0 {
		return q, nil
	}
	if fb.IDF == IDFOnce {
		if err := fb.perIDF(terms); err != nil {
			return nil, err
		}
	}
	qs := make([]query.Query, 0, len(terms)*len(fb.fields))
	for _, f := range fb.fields {
		for _, wt := range terms {
			tq := bleve.NewTermQuery(wt.Term)
			tq.SetField(f)
			tq.SetBoost(wt.Weight)
			qs = append(qs, tq)
		}
	}
	var out query.Query = bleve.NewDisjunctionQuery(qs...)
	if fb.Scope == ScopeQuery || !p.wordsOnly(q) {
		b := bleve.NewBooleanQuery()
		b.AddMust(q)
		b.AddShould(out)
		out = b
	}
	if fb.MinOverlap > 0 {
		agree, err := overlap(ctx, idx, out, hits)
		if err != nil {
			return nil, err
		}
		if agree < fb.MinOverlap {
			return q, nil
		}
	}
	return out, nil
}

// overlap returns the share of the feedback documents hits that the
// expanded query expanded finds among its own top len(hits) documents.
func overlap(ctx context.Context, idx bleve.Index, expanded query.Query, hits search.DocumentMatchCollection) (float64, error) {
	req := bleve.NewSearchRequestOptions(expanded, len(hits), 0, false)
	res, err := index.SearchTiesByID(ctx, idx, req, len(hits))
	if err != nil {
		return 0, err
	}
	fed := make(map[string]bool, len(hits))
	for _, h := range hits {
		fed[h.ID] = true
	}
	n := 0
	for _, h := range res.Hits[:min(len(hits), len(res.Hits))] {
		if fed[h.ID] {
			n++
		}
	}
	return float64(n) / float64(len(hits)), nil
}

// wordsOnly reports whether q asks for text's words and nothing more,
// as p's first stage does: match and term queries, alone or in a
// disjunction, over the fields feedback searches (all of them, or none
// named). The window may then hold documents matching feedback words only.
func (p *Pipeline) wordsOnly(q query.Query) bool {
	fields := map[string]bool{}
	var leaves func(q query.Query) bool
	leaves = func(q query.Query) bool {
		switch t := q.(type) {
		case *query.MatchQuery:
			fields[t.Field()] = true
			return t.Operator == query.MatchQueryOperatorOr && t.Fuzziness == 0 && t.Prefix == 0
		case *query.TermQuery:
			fields[t.Field()] = true
			return true
		case *query.DisjunctionQuery:
			if t.Min > 1 {
				return false
			}
			for _, d := range t.Disjuncts {
				if !leaves(d) {
					return false
				}
			}
			return true
		}
		return false
	}
	if !leaves(q) {
		return false
	}
	delete(fields, "")
	if len(fields) == 0 {
		return true
	}
	for _, f := range p.feedback.fields {
		if !fields[f] {
			return false
		}
		delete(fields, f)
	}
	return len(fields) == 0
}

// perIDF divides each term's weight by its idf (see IDFOnce), as Bleve's
// BM25 computes it from the index's counts; a term whose idf is not
// positive (stale statistics) keeps its weight.
func (fb *feedback) perIDF(terms []WeightedTerm) error {
	n, err := fb.stats.DocCount()
	if err != nil {
		return err
	}
	for i, wt := range terms {
		df, err := fb.stats.DocFreq(wt.Term)
		if err != nil {
			return err
		}
		if idf := math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5)); idf > 0 {
			terms[i].Weight /= idf
		}
	}
	return nil
}

// termLists returns the analyzed term counts of hits, in sorted order:
// from the index's terms payload where it has one, else from their
// stored fields (read through fields) analyzed as the index analyzes
// them.
func (fb *feedback) termLists(ctx context.Context, idx bleve.Index, fields Fields, hits search.DocumentMatchCollection) ([][]index.TermCount, error) {
	stored, err := ReadWindowPayloads(ctx, fb.payloads, index.TermsPayload, (index.TermsEncoder{}).ModelID(), index.HitIDs(hits))
	if err != nil {
		return nil, err
	}
	var need search.DocumentMatchCollection
	for i, h := range hits {
		if stored[i] == nil {
			need = append(need, h)
		}
	}
	if err := index.FetchFields(ctx, idx, fields.All(), need); err != nil {
		return nil, err
	}
	out := make([][]index.TermCount, len(hits))
	for i, h := range hits {
		if stored[i] != nil {
			if out[i], err = index.DecodeTermList(stored[i]); err != nil {
				return nil, fmt.Errorf("feedback document %s: %w", h.ID, err)
			}
			continue
		}
		out[i] = index.CountTerms(fb.tokens(fields.candidate(h, i+1, false).FullText()))
	}
	return out, nil
}

// errFeedbackBoost refuses a first stage that both weighs its terms by a
// stage's learned weights and by feedback.
var errFeedbackBoost = errors.New("first_stage.feedback and first_stage.query_boost both weigh the first-stage query's terms: choose one")

// Feedback returns the settings of p's first-stage feedback, defaults
// filled in, or nil when it has none.
func (p *Pipeline) Feedback() *Feedback {
	if p.feedback == nil {
		return nil
	}
	f := p.feedback.Feedback
	return &f
}

// Unexpanded returns p's first stage alone and without feedback, as
// deep as p's window: what feedback is measured against (a recipe's BM25
// baseline).
func (p *Pipeline) Unexpanded() *Pipeline {
	return &Pipeline{Window: p.Window, Fields: p.Fields, first: p.first}
}

// ParseFeedback reads first-stage feedback settings as a command line
// gives them: "none" (no feedback, nil), "rm3" (the defaults), or
// comma-separated KEY=VALUE pairs of docs, terms, lambda, idf,
// min_overlap and scope (e.g. "docs=10,terms=30,lambda=0.5,idf=once"),
// the others at their defaults.
func ParseFeedback(s string) (*Feedback, error) {
	switch strings.TrimSpace(s) {
	case "none":
		return nil, nil
	case "rm3":
		return &Feedback{}, nil
	}
	var f Feedback
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("feedback %q: want none, rm3, or KEY=VALUE pairs of docs, terms, lambda, idf, min_overlap and scope (e.g. docs=10,terms=30,lambda=0.5)", s)
		}
		if seen[k] {
			return nil, fmt.Errorf("feedback %q: %s given twice", s, k)
		}
		seen[k] = true
		var err error
		switch k {
		case "docs":
			f.Docs, err = strconv.Atoi(v)
		case "terms":
			f.Terms, err = strconv.Atoi(v)
		case "lambda":
			var l float64
			l, err = strconv.ParseFloat(v, 64)
			f.Lambda = &l
		case "idf":
			f.IDF = v
		case "min_overlap":
			f.MinOverlap, err = strconv.ParseFloat(v, 64)
		case "scope":
			f.Scope = v
		default:
			return nil, fmt.Errorf("feedback %q: unknown key %q (docs, terms, lambda, idf, min_overlap, scope)", s, k)
		}
		if err != nil {
			return nil, fmt.Errorf("feedback %q: %s: %q is not a number", s, k, v)
		}
	}
	if f.Docs == 0 && seen["docs"] || f.Terms == 0 && seen["terms"] {
		return nil, fmt.Errorf("feedback %q: docs and terms must be at least 1", s)
	}
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("feedback %q: %w", s, err)
	}
	return &f, nil
}
