package stages

import (
	"context"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// FuzzBuildConfig builds pipelines from fuzzed documents with every stage
// type registered, against a small index, in a folder holding no model: a
// document that parses either fails to build, with an error, or builds a
// pipeline that reranks two candidates without panicking. Parsing alone
// is FuzzParseConfig's.
func FuzzBuildConfig(f *testing.F) {
	for _, seed := range []string{
		"stages:\n  - type: tfidf\n  - type: bm25\n    options: {k1: 1.2, b: 0.75}\nfusion: {method: rrf, k: 60}\n",
		"window: 5\nstages:\n  - type: overlap\n  - type: length\n    name: len\nfusion: {weights: {len: 0.5, overlap: 1, first_rank: 1}}\n",
		"stages:\n  - type: meta\n    options: {field: votes}\nfusion: {method: none}\n",
		"stages:\n  - type: tweak\n    model: tweak.model\n",
		"stages:\n  - type: wmd\n    model: /dev/zero\n",
		"stages:\n  - type: tfidf\nfusion: {method: lambdamart, model: f.model}\n",
		"first_stage: {query_boost: tfidf}\nstages:\n  - type: tfidf\n",
		"stages:\n  - type: surface\n  - type: thread\n  - type: quality\n",
		"stages:\n  - type: rm3\n    options: {k: 2.5, terms: x, lambda: 0.3, b: .nan}\n",
		"stages:\n  - type: proximity\n    options: {alpha: 0.3, bm25: false, k1: -1}\n",
		"stages:\n  - type: regularize\n    options: {k: 1, alpha: 0.99}\n  - type: proximity\n",
		"stages:\n  - type: bm25\nfusion: {regularize: {k: 1, alpha: 0.99}}\n",
		"fusion: {method: none, regularize: {alpha: .nan, k: -3}}\n",
		"stages:\n  - type: tfidf\n    options: {titles: yes, field: 7}\n",
		"stages:\n  - type: deepmatch\n    options: {resolutions: [5, 0.5], neurons: 2, meta: false}\n",
		"stages:\n  - type: ssg\n    options: {topics: t, embed_dim: [1], k: 1e99}\n",
		"stages:\n  - type: tweak\n    options: {alpha: auto, payload: {a: 1}}\n",
	} {
		f.Add([]byte(seed))
	}
	idx, err := index.Create("")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { idx.Close() })
	docs := []dataset.Doc{
		{ID: "a", Title: "Bank fees", Text: "Which bank charges no fees for an expat account?", Metadata: map[string]any{"votes": 3}},
		{ID: "b", Text: "Visa renewal office hours"},
	}
	if err := idx.Add(context.Background(), docs, nil, nil); err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := rerank.ParseConfig(raw)
		if err != nil {
			return
		}
		env := rerank.EnvFor(idx)
		env.Dir = dir
		p, err := c.Build(env)
		if err != nil {
			return
		}
		cands := []rerank.Candidate{
			{Doc: dataset.Doc{ID: "a", Title: docs[0].Title, Text: docs[0].Text, Metadata: map[string]any{"votes": 3.0}}, Rank: 1, Score: 2},
			{Doc: dataset.Doc{ID: "b", Text: docs[1].Text}, Rank: 2, Score: 1},
		}
		_, _ = p.Rerank(context.Background(), rerank.Query{Text: "bank fees"}, cands)
	})
}
