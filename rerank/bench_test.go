package rerank_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/index/convert"
	"github.com/semrank/semrank/rerank"
)

// sharedData returns ../shared/data/semeval2016-task3 relative to the
// module root, or skips.
func sharedData(tb testing.TB) string {
	tb.Helper()
	dir, _ := os.Getwd()
	for ; dir != "/"; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
	}
	p := filepath.Join(dir, "..", "shared", "data", "semeval2016-task3")
	if _, err := os.Stat(p); err != nil {
		tb.Skip("shared SemEval data not found beside the repository")
	}
	return p
}

// BenchmarkRerank measures, in one run, a bare Bleve BM25 search for the
// top 100 comments of the SemEval subtask A collection (7,195 real forum
// comments) and the rerank that follows it, for windows of 10 and 100
// candidates. The goal: reranking 100 candidates costs at most
// half the search.
func BenchmarkRerank(b *testing.B) {
	d := sharedData(b)
	c := convert.NewSemEval(convert.SubtaskA)
	for _, f := range []string{
		"SemEval2016-Task3-CQA-QL-train-part2.xml",
		"SemEval2015-Task3-CQA-QL-train-reformatted-excluding-2016-questions-cleansed.xml",
		"SemEval2015-Task3-CQA-QL-dev-reformatted-excluding-2016-questions-cleansed.xml",
	} {
		if err := c.AddFile(filepath.Join(d, f)); err != nil {
			b.Fatal(err)
		}
	}
	ds := c.Dataset()
	ctx := context.Background()
	idx, err := index.Create(filepath.Join(b.TempDir(), "idx"))
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	if err := idx.Add(ctx, ds.Corpus, []index.PayloadEncoder{index.TermsEncoder{}}, nil); err != nil {
		b.Fatal(err)
	}
	if err := idx.Compact(ctx); err != nil {
		b.Fatal(err)
	}
	queries := ds.Queries[:50]
	specs := map[string][]rerank.StageSpec{"tfidf": {{Type: "tfidf"}}}
	for name, spec := range specs {
		cfg := &rerank.Config{Stages: spec}
		p, err := cfg.Build(rerank.EnvFor(idx))
		if err != nil {
			b.Fatal(err)
		}
		b.Run("search-top100", func(b *testing.B) {
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery(q.FullText()), 100, 0, false)
				req.Fields = []string{"title", "text", "meta"}
				if _, err := idx.Search(req); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, window := range []int{10, 100} {
			// Candidates are fetched once outside the timer: this is the
			// rerank cost alone.
			cands := make([][]rerank.Candidate, len(queries))
			for i, q := range queries {
				bq, _ := index.TextQuery(q.FullText())
				hits, err := idx.TopN(ctx, bq, window)
				if err != nil {
					b.Fatal(err)
				}
				cands[i] = rerank.FromHits(hits)
			}
			p.Window = window
			for _, cold := range []bool{true, false} {
				cache := "warm"
				if cold {
					cache = "cold"
				}
				// cold: every text is analyzed afresh; warm: analyzed
				// candidate texts come from analyzers' token cache.
				b.Run(name+"/window"+itoa(window)+"/"+cache, func(b *testing.B) {
					i := 0
					for b.Loop() {
						if cold {
							analyzers.ResetCache()
						}
						j := i % len(queries)
						i++
						if _, err := p.Rerank(ctx, rerank.Query{Text: queries[j].FullText()}, cands[j]); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
