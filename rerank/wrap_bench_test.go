package rerank_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/index/convert"
	"github.com/semrank/semrank/rerank"
)

// BenchmarkWrapPages measures, in one run, a page of 10 hits with their
// text from a bare Bleve search and from the same index wrapped with a
// TF-IDF reranking pipeline (window 100), at the top of the list and deep
// in it, over the 6,700 comments of SemEval subtask A's training file and
// 50 of its questions. The wrapped search reranks the window whatever the
// page; past it, what it adds to Bleve's cost should not grow with the
// page's depth.
func BenchmarkWrapPages(b *testing.B) {
	ds, idx := subtaskAIndex(b, nil)
	tfidf, err := rerank.NewStage(rerank.StageSpec{Type: "tfidf"}, rerank.EnvFor(idx))
	if err != nil {
		b.Fatal(err)
	}
	w := rerank.Wrap(idx, &rerank.Pipeline{Window: 100, Stages: []rerank.Stage{tfidf},
		Fusion: &rerank.Linear{Weights: map[string]float64{"tfidf": 1, rerank.FeatureFirstScore: 1}}})
	queries := ds.Queries[:50]
	for _, from := range []int{0, 1000} {
		for _, sys := range []struct {
			name string
			idx  bleve.Index
		}{{"bleve", idx}, {"wrapped", w}} {
			b.Run(sys.name+"/from"+itoa(from), func(b *testing.B) {
				i := 0
				for b.Loop() {
					req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery(queries[i%len(queries)].FullText()), 10, from, false)
					req.Fields = []string{index.FieldText}
					i++
					if _, err := sys.idx.Search(req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSearchCost measures, in one run, a bare top-10 Bleve search
// and the same request reranked through Wrap (window 100), over the
// comments of SemEval subtask A's training file indexed with their term
// counts, with one cheap stage (TF-IDF) and with the four lexical stages,
// over a semrank index and over the same comments in a plain Bleve index
// (bleve.NewIndexMapping(), fields subject and body). semrank bench
// measures the same from the command line, interleaved.
func BenchmarkSearchCost(b *testing.B) {
	ds, idx := subtaskAIndex(b, []index.PayloadEncoder{index.TermsEncoder{}})
	plain := plainIndex(b, ds)
	queries := ds.Queries[:50]
	for _, tc := range []struct {
		name, yaml string
		idx        bleve.Index
	}{
		{"semrank/tfidf", "stages: [{type: tfidf}]", idx},
		{"semrank/lexical", "stages: [{type: tfidf}, {type: bm25}, {type: overlap}, {type: length}]", idx},
		{"plain/tfidf", "fields: {title: subject, text: body}\nstages: [{type: tfidf}]", plain},
	} {
		cfg, err := rerank.ParseConfig([]byte("window: 100\n" + tc.yaml))
		if err != nil {
			b.Fatal(err)
		}
		p, err := cfg.Build(rerank.EnvOf(tc.idx))
		if err != nil {
			b.Fatal(err)
		}
		for _, sys := range []struct {
			name string
			idx  bleve.Index
		}{{"bare", tc.idx}, {"reranked", rerank.Wrap(tc.idx, p)}} {
			b.Run(tc.name+"/"+sys.name, func(b *testing.B) {
				i := 0
				for b.Loop() {
					q, err := p.Query(queries[i%len(queries)].FullText())
					i++
					if err != nil {
						continue
					}
					if _, err := sys.idx.Search(bleve.NewSearchRequestOptions(q, 10, 0, false)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// subtaskAIndex indexes the comments of SemEval subtask A's training file
// with encs' payloads into a compacted semrank index, closed when b ends.
func subtaskAIndex(b *testing.B, encs []index.PayloadEncoder) (*dataset.Dataset, *index.Index) {
	c := convert.NewSemEval(convert.SubtaskA)
	if err := c.AddFile(filepath.Join(sharedData(b), "SemEval2016-Task3-CQA-QL-train-part2.xml")); err != nil {
		b.Fatal(err)
	}
	ds := c.Dataset()
	ctx := context.Background()
	idx, err := index.Create(filepath.Join(b.TempDir(), "idx"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { idx.Close() })
	if err := idx.Add(ctx, ds.Corpus, encs, nil); err != nil {
		b.Fatal(err)
	}
	if err := idx.Compact(ctx); err != nil {
		b.Fatal(err)
	}
	return ds, idx
}

// BenchmarkAttachedCost measures, interleaved query by query in one run,
// a bare top-10 Bleve search over the comments of SemEval subtask A's
// training file in a plain Bleve index (bleve.NewIndexMapping(), fields
// subject and body), the same request reranked through Wrap (window
// 100, the four lexical stages) computing from the window's stored text,
// and reranked with the payloads attached to that index (rerank.Attach),
// and reports the mean time of each and the two ratios to the bare one.
func BenchmarkAttachedCost(b *testing.B) {
	ctx := context.Background()
	c := convert.NewSemEval(convert.SubtaskA)
	if err := c.AddFile(filepath.Join(sharedData(b), "SemEval2016-Task3-CQA-QL-train-part2.xml")); err != nil {
		b.Fatal(err)
	}
	ds := c.Dataset()
	path := filepath.Join(b.TempDir(), "plain")
	plain := plainIndexAt(b, ds, path)
	a, err := index.NewAttached(plain, path)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	cfg, err := rerank.ParseConfig([]byte("window: 100\nfields: {title: subject, text: body}\nstages: [{type: tfidf}, {type: bm25}, {type: overlap}, {type: length}]"))
	if err != nil {
		b.Fatal(err)
	}
	fromText, err := cfg.Build(rerank.EnvOf(plain))
	if err != nil {
		b.Fatal(err)
	}
	attached, err := cfg.Build(rerank.EnvOf(a))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := rerank.Attach(ctx, a, attached, nil); err != nil {
		b.Fatal(err)
	}
	systems := []bleve.Index{plain, rerank.Wrap(plain, fromText), rerank.Wrap(a, attached)}
	var spent [3]time.Duration
	queries := ds.Queries[:50]
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		q, err := fromText.Query(queries[n%len(queries)].FullText())
		if err != nil {
			continue
		}
		for i, sys := range systems {
			start := time.Now()
			if _, err := sys.Search(bleve.NewSearchRequestOptions(q, 10, 0, false)); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(start)
		}
	}
	b.ReportMetric(float64(spent[0].Microseconds())/float64(b.N), "µs/bare")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "text/bare")
	b.ReportMetric(float64(spent[2])/float64(spent[0]), "attached/bare")
}
