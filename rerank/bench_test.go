package rerank_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/index/convert"
	"github.com/semrank/semrank/models/lsa"
	"github.com/semrank/semrank/models/quality"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/stages"
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
// half the search. An LSA stage reading stored concept vectors stands for
// the concept-vector stages (S2Net, DSE) of the same dimension. The
// answer quality stage reads the score stored at index time; scoring the
// text instead costs what models/quality's BenchmarkScore measures, per
// comment. The peers stage (TF-IDF similarity to the other candidates)
// compares every candidate with every other, in linear time.
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
	// A small TWEAK model, trained on 100 of the queries, whose document
	// vectors are stored at index time.
	var texts []string
	for _, d := range ds.Corpus {
		texts = append(texts, d.FullText())
	}
	var qids []string
	for _, q := range ds.Queries[:100] {
		if len(ds.Candidates.Ranking(q.ID)) > 0 {
			qids = append(qids, q.ID)
		}
	}
	set, err := tweak.NewSet(ds, qids, tweak.Stats{DF: tweak.CountDF(texts)}, false)
	if err != nil {
		b.Fatal(err)
	}
	tm, err := tweak.Train(ctx, set, tweak.Config{Loss: tweak.LossSSE, Alpha: 0.1, MaxIterations: 30}, tweak.Options{})
	if err != nil {
		b.Fatal(err)
	}
	// An LSA model (k = 100) whose concept vectors are stored at index
	// time: S2Net and DSE vectors are read and compared the same way.
	lm, err := lsa.Train(texts, lsa.Config{Dim: 100})
	if err != nil {
		b.Fatal(err)
	}
	lsaPath := filepath.Join(b.TempDir(), "lsa.model")
	if err := lm.Save(lsaPath); err != nil {
		b.Fatal(err)
	}
	// The answer quality model, trained on the same 100 queries' comments.
	var exs []quality.Example
	for _, id := range qids {
		for _, e := range ds.Candidates.Ranking(id) {
			d, _ := ds.Doc(e.DocID)
			exs = append(exs, quality.Example{Text: d.FullText(), Good: ds.Qrels[id][e.DocID] > 0})
		}
	}
	qm, err := quality.Train(ctx, exs, quality.Config{Bigrams: true, Chars: true})
	if err != nil {
		b.Fatal(err)
	}
	qualityPath := filepath.Join(b.TempDir(), "quality.model")
	if err := qm.Save(qualityPath); err != nil {
		b.Fatal(err)
	}
	qenc, err := quality.NewEncoder(qm)
	if err != nil {
		b.Fatal(err)
	}
	idx, err := index.Create(filepath.Join(b.TempDir(), "idx"))
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	if err := idx.Add(ctx, ds.Corpus, []index.PayloadEncoder{index.TermsEncoder{}, tweak.NewEncoder(tm), lm.PayloadEncoder(""), qenc}, nil); err != nil {
		b.Fatal(err)
	}
	if err := idx.Compact(ctx); err != nil {
		b.Fatal(err)
	}
	queries := ds.Queries[200:250]
	tweakStage, err := stages.NewTWEAK("tweak", tm, idx)
	if err != nil {
		b.Fatal(err)
	}
	tfidf, err := rerank.NewStage(rerank.StageSpec{Type: "tfidf"}, rerank.EnvFor(idx))
	if err != nil {
		b.Fatal(err)
	}
	peers, err := rerank.NewStage(rerank.StageSpec{Type: "tfidf", Options: map[string]any{"peers": true}}, rerank.EnvFor(idx))
	if err != nil {
		b.Fatal(err)
	}
	concept, err := rerank.NewStage(rerank.StageSpec{Type: "lsa", Model: lsaPath}, rerank.EnvFor(idx))
	if err != nil {
		b.Fatal(err)
	}
	qualityStored, err := rerank.NewStage(rerank.StageSpec{Type: "quality", Model: qualityPath}, rerank.EnvFor(idx))
	if err != nil {
		b.Fatal(err)
	}
	pipelines := []struct {
		name   string
		stages []rerank.Stage
	}{
		{"tfidf", []rerank.Stage{tfidf}},
		{"peers", []rerank.Stage{peers}},
		{"tweak", []rerank.Stage{tweakStage}},
		{"tfidf+tweak", []rerank.Stage{tfidf, tweakStage}},
		{"lsa-stored", []rerank.Stage{concept}},
		{"quality-stored", []rerank.Stage{qualityStored}},
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
	for _, pl := range pipelines {
		p := &rerank.Pipeline{Stages: pl.stages, Fusion: &rerank.Linear{Weights: map[string]float64{rerank.FeatureFirstRank: 1}}}
		name := pl.name
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
				cands[i] = hits
			}
			p.Window = window
			b.Run(name+"/window"+itoa(window), func(b *testing.B) {
				i := 0
				for b.Loop() {
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
