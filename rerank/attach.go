package rerank

import (
	"context"
	"errors"
	"fmt"

	"github.com/semrank/semrank/eval"
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
	encs := append([]PayloadEncoder{index.TermsEncoder{Analyzer: st.Analyzer(), Tokens: st.Tokens}}, p.Encoders()...)
	docs := func(yield func(eval.Doc, error) bool) {
		stop := errors.New("stop")
		err := Searcher{Index: a, Pipeline: p}.Documents(ctx, nil, func(c Candidate) error {
			if !yield(eval.Doc{ID: c.ID, Title: c.Title, Text: c.Text}, nil) {
				return stop
			}
			return nil
		})
		if err != nil && !errors.Is(err, stop) {
			yield(eval.Doc{}, fmt.Errorf("rerank: attach: reading documents: %w", err))
		}
	}
	return a.Attach(ctx, p.Fields.source(st), encs, docs, progress)
}
