package rerank_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
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
	indexDemo(idx)

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

// An application's own index, on disk, gets the payloads its pipeline's
// stages read attached, computed from its stored text; the stages then
// read them instead of each candidate's text, with the same scores.
func Example_attach() {
	dir, err := os.MkdirTemp("", "attach-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.bleve")
	idx, err := bleve.New(path, bleve.NewIndexMapping())
	if err != nil {
		log.Fatal(err)
	}
	indexDemo(idx)

	// Added: the index with its payloads, and the pipeline built on it.
	a, err := index.NewAttached(idx, path)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	cfg, err := rerank.ParseConfig([]byte(`
fields: {title: subject, text: body}
stages: [{type: tfidf}, {type: bm25}, {type: overlap}]
`))
	if err != nil {
		log.Fatal(err)
	}
	p, err := cfg.Build(rerank.EnvOf(a))
	if err != nil {
		log.Fatal(err)
	}
	rep, err := rerank.Attach(context.Background(), a, p, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d documents, %d computed\n", rep.Docs, rep.Computed)
	rep, err = rerank.Attach(context.Background(), a, p, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("again: %d unchanged\n", rep.Kept)

	res, err := rerank.Wrap(a, p).Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("best bank in Doha"), 3, 0, false))
	if err != nil {
		log.Fatal(err)
	}
	for i, h := range res.Hits {
		fmt.Printf("%d. %s\n", i+1, h.ID)
	}
	// Output:
	// 500 documents, 500 computed
	// again: 500 unchanged
	// 1. Q268_R31
	// 2. Q268_R13
	// 3. Q268_R5
}

// indexDemo is the application's indexing: the demo's forum questions
// into idx, fields "subject" and "body".
func indexDemo(idx bleve.Index) {
	docs, err := dataset.LoadCorpus("../testdata/demo")
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
}
