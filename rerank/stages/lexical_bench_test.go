package stages

import (
	"context"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// BenchmarkLexicalWindow scores windows of 100 real forum comments
// (testdata/tweak) from their stored term counts, for its questions in
// turn, with tfidf alone and with the four lexical stages, each window
// with a memo of its own as a search gives it: what a window costs
// these stages once their documents' tables are cached.
func BenchmarkLexicalWindow(b *testing.B) {
	ds, payloads, stats := tweakTerms(b)
	var cands []rerank.Candidate
	for _, d := range ds.Corpus[:min(100, len(ds.Corpus))] {
		cands = append(cands, rerank.Candidate{Doc: dataset.Doc{ID: d.ID}})
	}
	for _, tc := range []struct {
		name   string
		stages []rerank.Stage
	}{
		{"tfidf", []rerank.Stage{&TFIDF{Stats: stats, Payloads: &payloads}}},
		{"lexical", []rerank.Stage{&TFIDF{Stats: stats, Payloads: &payloads}, &BM25{Stats: stats, Payloads: &payloads, K1: 1.2, B: 0.75},
			&Overlap{Payloads: &payloads}, &Length{Payloads: &payloads}}},
	} {
		p := &rerank.Pipeline{Stages: tc.stages}
		b.Run(tc.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				q := rerank.Query{Text: ds.Queries[i%len(ds.Queries)].FullText()}
				i++
				if _, err := p.ScoreStages(context.Background(), q, cands); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
