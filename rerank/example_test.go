package rerank_test

import (
	"fmt"
	"log"
	"os"
	"strconv"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
	_ "github.com/semrank/semrank/rerank/stages" // registers the stage types
)

// An existing Bleve application adds three lines: build a pipeline, wrap
// the index, and keep calling Search as before.
func ExampleWrap() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	// Existing code: an index and its documents.
	idx, err := index.Create(dir + "/idx")
	if err != nil {
		log.Fatal(err)
	}
	defer idx.Close()
	b := idx.NewBatch()
	b.Index("q1", map[string]any{"title": "Best bank in Doha?", "text": "Which bank gives good service for expats in Doha? I moved here last month with my family, my employer pays the salary on the first of each month, and I need a card that works when travelling, online transfers home, and a branch near the office."})
	b.Index("q2", map[string]any{"title": "Good bank, good loan", "text": "good good good bank bank bank loan loan loan"})
	b.Index("q3", map[string]any{"title": "Expats bank", "text": "Good bank for expats?"})
	if err := idx.Batch(b); err != nil {
		log.Fatal(err)
	}

	// Added: a pipeline with one stage (TF-IDF cosine) fused with the
	// first-stage rank, wrapped around the index.
	cfg := &rerank.Config{
		Window: 100,
		Stages: []rerank.StageSpec{{Type: "tfidf"}},
		Fusion: rerank.FusionSpec{Method: "linear", Weights: map[string]float64{"tfidf": 1}},
	}
	p, err := cfg.Build(rerank.EnvFor(idx))
	if err != nil {
		log.Fatal(err)
	}
	var searcher bleve.Index = rerank.Wrap(idx, p)

	// Unchanged: the search call, now reranked.
	req := bleve.NewSearchRequest(bleve.NewMatchQuery("good bank for expats in Doha"))
	res, err := searcher.Search(req)
	if err != nil {
		log.Fatal(err)
	}
	first, _ := idx.Search(req)
	for i := range res.Hits {
		fmt.Printf("%d. bm25 %s  reranked %s\n", i+1, first.Hits[i].ID, res.Hits[i].ID)
	}
	// Output:
	// 1. bm25 q1  reranked q3
	// 2. bm25 q3  reranked q1
	// 3. bm25 q2  reranked q2
}

// Cursor pages of a reranked list: the cursor's score is the last hit's
// Score as a string. A hit's Sort holds Bleve's placeholder "_score" for
// it, which a reranked search refuses as a cursor.
func ExampleIndex_Search_searchAfter() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	idx, err := index.Create(dir + "/idx")
	if err != nil {
		log.Fatal(err)
	}
	defer idx.Close()
	b := idx.NewBatch()
	b.Index("d1", map[string]any{"title": "Bank", "text": "bank"})
	b.Index("d2", map[string]any{"title": "Bank for expats", "text": "Which bank is good for expats?"})
	b.Index("d3", map[string]any{"title": "Expats", "text": "Expats in Doha need a bank."})
	b.Index("d4", map[string]any{"title": "Loans", "text": "A bank loan for a car, or a bank card?"})
	b.Index("d5", map[string]any{"title": "Doha", "text": "Good bank in Doha for expats, and good service."})
	if err := idx.Batch(b); err != nil {
		log.Fatal(err)
	}
	p, err := (&rerank.Config{Stages: []rerank.StageSpec{{Type: "overlap"}}}).Build(rerank.EnvFor(idx))
	if err != nil {
		log.Fatal(err)
	}
	w := rerank.Wrap(idx, p)

	q := bleve.NewMatchQuery("good bank for expats in Doha")
	req := bleve.NewSearchRequestOptions(q, 2, 0, false)
	req.SortBy([]string{"-_score", "_id"})
	for page := 1; ; page++ {
		res, err := w.Search(req)
		if err != nil {
			log.Fatal(err)
		}
		if len(res.Hits) == 0 {
			break
		}
		for _, h := range res.Hits {
			fmt.Printf("page %d: %s %v\n", page, h.ID, h.Sort)
		}
		last := res.Hits[len(res.Hits)-1]
		req = bleve.NewSearchRequestOptions(q, 2, 0, false)
		req.SortBy([]string{"-_score", "_id"})
		req.SetSearchAfter([]string{strconv.FormatFloat(last.Score, 'g', -1, 64), last.ID})
	}

	req.SetSearchAfter([]string{"_score", "d1"}) // a hit's Sort: refused
	_, err = w.Search(req)
	fmt.Println(err != nil)
	// Output:
	// page 1: d5 [_score d5]
	// page 1: d2 [_score d2]
	// page 2: d3 [_score d3]
	// page 2: d1 [_score d1]
	// page 3: d4 [_score d4]
	// true
}

// The words Wrap reranks with: a restriction on a metadata field goes in
// a boolean query's filter, so that its value is not compared with the
// candidates' text.
func ExampleQueryText() {
	words := bleve.NewMatchQuery("bank account")
	lang := bleve.NewTermQuery("ar")
	lang.SetField("lang")

	must := bleve.NewBooleanQuery()
	must.AddMust(words, lang)
	fmt.Printf("%q\n", rerank.QueryText(must))

	filtered := bleve.NewBooleanQuery()
	filtered.AddMust(words)
	filtered.AddFilter(lang)
	fmt.Printf("%q\n", rerank.QueryText(filtered))

	fmt.Printf("%q\n", rerank.QueryText(bleve.NewQueryStringQuery(`title:bank +account -visa`)))
	// Output:
	// "bank account ar"
	// "bank account"
	// "account bank"
}
