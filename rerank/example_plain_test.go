package rerank_test

import (
	"fmt"
	"log"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/rerank"
	_ "github.com/semrank/semrank/rerank/stages" // registers the stage types
)

// An application with its own Bleve index — the default mapping, its own
// field names — adds a pipeline naming those fields and wraps the index;
// its Search calls stay as they were. The stages read the index's own
// statistics and analyzers, and the documents' stored fields.
func Example_plainIndex() {
	// Existing code: a Bleve index of forum questions (the demo's
	// SemEval-2016 slice), fields "subject" and "body".
	idx, err := bleve.NewMemOnly(bleve.NewIndexMapping())
	if err != nil {
		log.Fatal(err)
	}
	defer idx.Close()
	docs, err := eval.LoadCorpus("../testdata/demo")
	if err != nil {
		log.Fatal(err)
	}
	b := idx.NewBatch()
	for _, d := range docs {
		b.Index(d.ID, map[string]any{"subject": d.Title, "body": d.Text})
	}
	if err := idx.Batch(b); err != nil {
		log.Fatal(err)
	}

	// Added: a pipeline over those fields, built against the index.
	cfg, err := rerank.ParseConfig([]byte(`
window: 50
fields: {title: subject, text: body}
stages:
  - type: tfidf
  - type: bm25
  - type: overlap
`))
	if err != nil {
		log.Fatal(err)
	}
	p, err := cfg.Build(rerank.EnvOf(idx))
	if err != nil {
		log.Fatal(err)
	}
	var searcher bleve.Index = rerank.Wrap(idx, p)

	// Unchanged: the application's search, now reranked.
	req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("best bank in Doha"), 3, 0, false)
	req.Fields = []string{"subject"}
	first, err := idx.Search(req)
	if err != nil {
		log.Fatal(err)
	}
	res, err := searcher.Search(req)
	if err != nil {
		log.Fatal(err)
	}
	for i, h := range res.Hits {
		fmt.Printf("%d. bleve %-9s semrank %-9s %s\n", i+1, first.Hits[i].ID, h.ID, h.Fields["subject"])
	}
	// Output:
	// 1. bleve Q268_R31  semrank Q268_R31  what is the best bank to open a savings account in doha?
	// 2. bleve Q268_R5   semrank Q268_R13  Which is the best bank around??
	// 3. bleve Q268_R16  semrank Q268_R5   What is the best bank to open an account?
}
