package rerank

import (
	"context"
	"errors"
	"slices"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/internal/runs"
)

// Searcher is semrank's query path over any Bleve index: a first-stage
// Bleve search, its window of candidates read from the stored fields the
// pipeline names (Pipeline.Fields), the stages, and the fusion. semrank
// search, run and rerank, the recipes and the fusion trainer search
// through it, and Wrap answers bleve.SearchRequests with the same steps,
// so one pipeline ranks alike everywhere.
type Searcher struct {
	Index    bleve.Index
	Pipeline *Pipeline
}

// EnvFor returns the stage environment backed by idx.
func EnvFor(idx *index.Index) Env {
	return Env{Index: idx, Payloads: idx, Stats: idx}
}

// EnvOf returns the stage environment backed by idx, any Bleve index: a
// semrank index's (EnvFor), an EnvIndex's own, or one whose statistics
// and analysis a pipeline takes from idx and its mapping for the fields it
// names.
func EnvOf(idx bleve.Index) Env {
	switch x := idx.(type) {
	case *index.Index:
		return EnvFor(x)
	case EnvIndex:
		return x.StageEnv()
	}
	return Env{Index: idx}
}

// FirstStagePipeline returns the pipeline of the first stage alone over
// idx, window hits deep: no stages, and the first stage's order.
func FirstStagePipeline(idx bleve.Index, window int) (*Pipeline, error) {
	return FirstStageOf(idx, &Config{}, window)
}

// FirstStageOf returns the pipeline of c's fields and first stage alone
// over idx, window hits deep: none of c's stages (whose models may not be
// trained yet; a query boost, which names one, is left out too), its
// feedback if any, and the first stage's order.
func FirstStageOf(idx bleve.Index, c *Config, window int) (*Pipeline, error) {
	fc := &Config{Window: window, Fields: c.Fields, FirstStage: FirstStage{Fields: c.FirstStage.Fields, Feedback: c.FirstStage.Feedback}, Fusion: FusionSpec{Method: "none"}}
	return fc.Build(EnvOf(idx))
}

// IndexCorpus returns every document of idx, in id order, its title and
// text read from p's fields (Documents): the corpus trainers learn from
// when the documents are an index's, one semrank did not build among
// them, as p's stages will read them.
func IndexCorpus(ctx context.Context, idx bleve.Index, p *Pipeline) ([]dataset.Doc, error) {
	var docs []dataset.Doc
	err := Searcher{Index: idx, Pipeline: p}.Documents(ctx, nil, func(c Candidate) error {
		docs = append(docs, textDoc(c))
		return nil
	})
	return docs, err
}

// textDoc returns c's document without its metadata, which on an index
// semrank did not build holds every stored field: the id and the text the
// pipeline's fields read, which is what trainers and payload encoders see.
func textDoc(c Candidate) dataset.Doc {
	return dataset.Doc{ID: c.ID, Title: c.Title, Text: c.Text}
}

// Search returns the first max(n, window) hits for q reranked: the
// window's by fused score, each carrying its first-stage rank and score
// (Candidate) and every stage's score, then the hits past the window in
// first-stage order. first is the first-stage query; nil means
// Pipeline.Query(q.Text). A query text without searchable terms gives no
// hits.
func (s Searcher) Search(ctx context.Context, q Query, first query.Query, n int) ([]Scored, error) {
	ctx = withWindowMemo(ctx)
	cands, err := s.Candidates(ctx, q, first, n)
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	return s.Pipeline.Rerank(ctx, q, cands)
}

// Candidates returns the first max(n, window) first-stage candidates for
// q, as Search reranks them: tied scores at the window's cut chosen by id
// (index.SearchTiesByID), the window's scores rounded and ordered as
// index.StableOrder orders them. Only the window's candidates whose
// document a stage reads (see DocReader) carry their stored title, text
// and fields; Load fills in others'.
func (s Searcher) Candidates(ctx context.Context, q Query, first query.Query, n int) ([]Candidate, error) {
	first, err := s.first(q, first)
	if err != nil || first == nil {
		return nil, err
	}
	if first, err = s.Pipeline.expand(ctx, s.Index, first, q.Text); err != nil {
		return nil, err
	}
	w := s.Pipeline.WindowSize()
	req := bleve.NewSearchRequestOptions(first, max(n, w), 0, false)
	res, err := index.SearchTiesByID(ctx, s.Index, req, w)
	if err != nil {
		return nil, err
	}
	window := res.Hits[:min(w, len(res.Hits))]
	index.StableOrder(window)
	if err := s.Pipeline.loadDocs(ctx, s.Index, q, window, nil); err != nil {
		return nil, err
	}
	return s.Pipeline.candidates(res.Hits), nil
}

// loadDocs sets the stored fields of the hits whose document a stage
// reads (see DocReader), in one search, having started the stages that
// read none on the hits' candidates for q, with the given ranks given
// (nil: none), to score meanwhile (scoreAhead).
func (p *Pipeline) loadDocs(ctx context.Context, idx bleve.Index, q Query, hits search.DocumentMatchCollection, given []int) error {
	reads, docless, err := p.windowDocs(ctx, index.HitIDs(hits))
	if err != nil {
		return err
	}
	p.scoreAhead(ctx, q, hits, given, reads, docless)
	var need search.DocumentMatchCollection
	for i, h := range hits {
		if reads[i] {
			need = append(need, h)
		}
	}
	return index.FetchFields(ctx, idx, []string{"*"}, need)
}

// Load sets the stored title, text and fields of the candidates a search
// left without them (no stage read them), to show them: one search by id.
// Over an IndexAlias whose children share ids, a candidate gets one
// child's document.
func (s Searcher) Load(ctx context.Context, cands []Candidate) error {
	var hits search.DocumentMatchCollection
	var at []int
	for i, c := range cands {
		if c.Metadata == nil && c.Title == "" && c.Text == "" {
			hits = append(hits, &search.DocumentMatch{ID: c.ID})
			at = append(at, i)
		}
	}
	if err := index.FetchFields(ctx, s.Index, []string{"*"}, hits); err != nil {
		return err
	}
	for j, h := range hits {
		c := s.Pipeline.Fields.candidate(h, cands[at[j]].Rank, true)
		cands[at[j]].Title, cands[at[j]].Text, cands[at[j]].Metadata = c.Title, c.Text, c.Metadata
	}
	return nil
}

// Given reranks exactly the documents ids, a given candidate list (such as
// SemEval's search-engine order): scored by the first stage, the matching
// ones first (see index.GivenHits), each candidate carrying its place in
// ids as GivenRank.
func (s Searcher) Given(ctx context.Context, q Query, first query.Query, ids []string) ([]Scored, error) {
	ctx = withWindowMemo(ctx)
	cands, err := s.GivenCandidates(ctx, q, first, ids)
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	return s.Pipeline.Rerank(ctx, q, cands)
}

// GivenCandidates returns the candidates Given reranks.
func (s Searcher) GivenCandidates(ctx context.Context, q Query, first query.Query, ids []string) ([]Candidate, error) {
	first, err := s.first(q, first)
	if err != nil {
		return nil, err
	}
	if first, err = s.Pipeline.expand(ctx, s.Index, first, q.Text); err != nil {
		return nil, err
	}
	hits, given, err := index.GivenHits(ctx, s.Index, first, ids, nil)
	if err != nil {
		return nil, err
	}
	w := min(s.Pipeline.WindowSize(), len(hits))
	if err := s.Pipeline.loadDocs(ctx, s.Index, q, hits[:w], given[:w]); err != nil {
		return nil, err
	}
	cands := s.Pipeline.candidates(hits)
	for i := range cands {
		cands[i].GivenRank = given[i]
	}
	return cands, nil
}

// first returns the first-stage query: first, or the pipeline's query for
// q's text; nil when that text has no searchable terms.
func (s Searcher) first(q Query, first query.Query) (query.Query, error) {
	if first != nil {
		return first, nil
	}
	first, err := s.Pipeline.Query(q.Text)
	if errors.Is(err, index.ErrEmptyQuery) {
		return nil, nil
	}
	return first, err
}

// candidates returns the candidates of first-stage hits, in their order,
// made on every core when the hits carry stored fields (decoding each
// hit's stored metadata is most of it); hits without fields, whose
// candidates are their ids and scores, are made on the caller's
// goroutine, for which waking another costs more than it saves.
func (p *Pipeline) candidates(hits search.DocumentMatchCollection) []Candidate {
	out := make([]Candidate, len(hits))
	run := len(hits)
	if slices.ContainsFunc(hits, func(h *search.DocumentMatch) bool { return h.Fields != nil }) {
		run = candidateRun
	}
	meta := p.readsMetadata()
	_ = runs.Do(len(hits), run, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			out[i] = p.Fields.candidate(hits[i], i+1, meta)
		}
		return nil
	})
	return out
}

// candidateRun is the fewest hits candidates makes on a core of its own.
const candidateRun = 32

// Documents calls fn with every document of the index, in id order, as a
// candidate: its title and text read from the pipeline's fields, and its
// stored fields (all of them with "*"; the pipeline's alone when fields
// is nil). Training from an index semrank did not build starts from it
// (semrank convert bleve), as attaching payloads to it does (Attach). It
// stops at fn's first error.
func (s Searcher) Documents(ctx context.Context, fields []string, fn func(Candidate) error) error {
	const page = 1000
	if fields == nil {
		fields = s.Pipeline.Fields.All()
	}
	var after []string
	for {
		req := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), page, 0, false)
		req.SortBy([]string{"_id"})
		req.Fields = fields
		req.SearchAfter = after
		res, err := s.Index.SearchInContext(ctx, req)
		if err != nil {
			return err
		}
		for _, h := range res.Hits {
			if err := fn(s.Pipeline.Fields.candidate(h, 0, true)); err != nil {
				return err
			}
		}
		if len(res.Hits) < page {
			return nil
		}
		after = []string{res.Hits[len(res.Hits)-1].ID}
	}
}
