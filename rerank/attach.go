package rerank

import (
	"context"
	"errors"
	"fmt"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
)

// Attach computes the payloads that p's stages read (the term counts the
// lexical stages read, and the encoders of Pipeline.Encoders) for every
// document of a, an index semrank did not build, from the stored text of
// p's fields analyzed as the stages analyze it over a, and stores them
// beside a (index.Attached.Attach). p must have been built against a
// (EnvOf). From then on, stages of a pipeline reading the same fields
// over a read the payloads instead of each candidate's stored text, and
// score as they would from the text. Run again, it recomputes only the
// payloads of documents whose text changed, and drops those of documents
// that are gone.
func Attach(ctx context.Context, a *index.Attached, p *Pipeline, progress index.Progress) (index.AttachReport, error) {
	if err := p.Fields.check(); err != nil {
		return index.AttachReport{}, err
	}
	st, err := p.Fields.stats(a)
	if err != nil {
		return index.AttachReport{}, err
	}
	docs := func(yield func(dataset.Doc, error) bool) {
		stop := errors.New("stop")
		err := Searcher{Index: a, Pipeline: p}.Documents(ctx, nil, func(c Candidate) error {
			if !yield(textDoc(c), nil) {
				return stop
			}
			return nil
		})
		if err != nil && !errors.Is(err, stop) {
			yield(dataset.Doc{}, fmt.Errorf("rerank: attach: reading documents: %w", err))
		}
	}
	return a.Attach(ctx, p.Fields.source(st), attachEncoders(p, st), docs, progress)
}

// attachEncoders returns the encoders of the payloads p's stages read over
// an index analyzed as st analyzes p's fields.
func attachEncoders(p *Pipeline, st *index.Stats) []PayloadEncoder {
	return append([]PayloadEncoder{index.TermsEncoder{Analyzer: st.Analyzer(), Tokens: st.Tokens}}, p.Encoders()...)
}

// Keep makes writes through a that index documents (its Index and Batch)
// compute their payloads for p's stages in the same call
// (index.Attached.Keep), read back from the stored text of p's fields:
// no document written through a is then scored from its text. a must
// hold payloads attached for p's fields (Attach).
func Keep(a *index.Attached, p *Pipeline) error {
	st, err := p.Fields.stats(a)
	if err != nil {
		return err
	}
	read := func(ctx context.Context, ids []string) ([]dataset.Doc, error) {
		req := bleve.NewSearchRequestOptions(bleve.NewDocIDQuery(ids), len(ids), 0, false)
		req.Fields = p.Fields.All()
		res, err := a.SearchInContext(ctx, req)
		if err != nil {
			return nil, err
		}
		docs := make([]dataset.Doc, len(res.Hits))
		for i, h := range res.Hits {
			docs[i] = textDoc(p.Fields.candidate(h, 0, true))
		}
		return docs, nil
	}
	return a.Keep(p.Fields.source(st), attachEncoders(p, st), read)
}
