package rerank_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/index/convert"
	"github.com/semrank/semrank/models/ssg"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/stages"
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

// BenchmarkSearchCost measures a bare top-10 Bleve search and the same
// request reranked through Wrap (window 100), interleaved query by query in
// one run, and reports the bare search's mean time and the ratio of the
// means: over the full CACM collection (3,204 abstracts, its 64 queries) and
// over the comments of SemEval subtask A's training file (50 of its
// questions), indexed with their term counts, with one cheap stage (TF-IDF)
// and with the four lexical stages, and over the same comments in a plain
// Bleve index (bleve.NewIndexMapping(), fields subject and body). Over
// CACM it also measures the floor under a cheap stage: a bare Bleve
// search for the window's 116 hits, and a pipeline of no stage. semrank
// bench measures the same from the command line, with medians.
func BenchmarkSearchCost(b *testing.B) {
	encs := []index.PayloadEncoder{index.TermsEncoder{}}
	ds, idx := subtaskAIndex(b, encs)
	plain := plainIndex(b, ds)
	cacm, err := convert.SMART(filepath.Join(sharedCACM(b), "cacm.all"), filepath.Join(sharedCACM(b), "query.text"), filepath.Join(sharedCACM(b), "qrels.text"))
	if err != nil {
		b.Fatal(err)
	}
	cacmIdx := compactedIndex(b, cacm, encs)
	for _, tc := range []struct {
		name, yaml string
		idx        bleve.Index
		queries    []dataset.Query
	}{
		{"cacm/tfidf", "stages: [{type: tfidf}]", cacmIdx, cacm.Queries},
		{"semrank/tfidf", "stages: [{type: tfidf}]", idx, ds.Queries[:50]},
		{"semrank/lexical", "stages: [{type: tfidf}, {type: bm25}, {type: overlap}, {type: length}]", idx, ds.Queries[:50]},
		{"plain/tfidf", "fields: {title: subject, text: body}\nstages: [{type: tfidf}]", plain, ds.Queries[:50]},
	} {
		cfg, err := rerank.ParseConfig([]byte("window: 100\n" + tc.yaml))
		if err != nil {
			b.Fatal(err)
		}
		p, err := cfg.Build(rerank.EnvOf(tc.idx))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			interleaved(b, p, tc.queries, []string{"reranked"}, tc.idx, rerank.Wrap(tc.idx, p))
		})
	}
	// The floor under one cheap stage over CACM: Bleve's search for the
	// window's hits (100 and the tie slack index.SearchTiesByID asks
	// for), bare, and a pipeline of no stage (that search, and Wrap
	// around it).
	empty, err := rerank.ParseConfig([]byte("window: 100\nstages: []\nfusion: {method: none}"))
	if err != nil {
		b.Fatal(err)
	}
	p, err := empty.Build(rerank.EnvOf(cacmIdx))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("cacm/floor", func(b *testing.B) {
		interleaved(b, p, cacm.Queries, []string{"bleve116", "nostage"}, cacmIdx, sized{cacmIdx, 116}, rerank.Wrap(cacmIdx, p))
	})
}

// BenchmarkSemanticCost is BenchmarkSearchCost's measure for the wmd and
// ssg stages over the full CACM collection (window 100, its 64 queries),
// wmd also over CACM indexed with the stage's nBOW payloads (wmd-nbow),
// ssg also with the collection's neighbour lists (ssg-lists):
// a bare top-10 Bleve search and the same request reranked through Wrap,
// interleaved. Their word vectors and topic model are trained on CACM's
// documents and queries as a recipe trains them (rerank.TrainStage), which
// takes a few seconds before the timing starts. semrank bench measures the
// same from the command line (docs/RESULTS.md's cost section).
func BenchmarkSemanticCost(b *testing.B) {
	cacm, err := convert.SMART(filepath.Join(sharedCACM(b), "cacm.all"), filepath.Join(sharedCACM(b), "query.text"), filepath.Join(sharedCACM(b), "qrels.text"))
	if err != nil {
		b.Fatal(err)
	}
	idx := compactedIndex(b, cacm, []index.PayloadEncoder{index.TermsEncoder{}})
	var text []string
	for _, d := range cacm.Corpus {
		text = append(text, d.FullText())
	}
	for _, q := range cacm.Queries {
		text = append(text, q.FullText())
	}
	in := rerank.TrainInput{Text: text, Dir: b.TempDir()}
	for _, typ := range []string{"wmd", "wmd-nbow", "ssg", "ssg-lists"} {
		base, variant, _ := strings.Cut(typ, "-")
		spec, err := rerank.TrainStage(context.Background(), rerank.StageSpec{Type: base}, in)
		if err != nil {
			b.Fatal(err)
		}
		if variant == "lists" {
			spec.Options["neighbours"] = neighbourLists(b, spec, idx, cacm)
		}
		cfg := &rerank.Config{Window: 100, Stages: []rerank.StageSpec{spec}}
		x := idx
		if variant == "nbow" {
			// CACM indexed with the stage's payloads, as semrank index
			// --pipeline indexes it.
			p, err := cfg.Build(rerank.EnvOf(idx))
			if err != nil {
				b.Fatal(err)
			}
			x = compactedIndex(b, cacm, append([]index.PayloadEncoder{index.TermsEncoder{}}, p.Encoders()...))
		}
		p, err := cfg.Build(rerank.EnvOf(x))
		if err != nil {
			b.Fatal(err)
		}
		b.Run("cacm/"+typ, func(b *testing.B) {
			interleaved(b, p, cacm.Queries, []string{"reranked"}, x, rerank.Wrap(x, p))
		})
	}
}

// neighbourLists computes the neighbour lists of ds's documents in the
// word vectors of spec, an ssg stage's, as semrank train neighbours does
// (a minute over CACM), and returns the file it wrote them to.
func neighbourLists(b *testing.B, spec rerank.StageSpec, idx *index.Index, ds *dataset.Dataset) string {
	space, err := stages.WordSpace(spec, rerank.EnvOf(idx))
	if err != nil {
		b.Fatal(err)
	}
	var ids, texts []string
	for _, d := range ds.Corpus {
		ids, texts = append(ids, d.ID), append(texts, d.FullText())
	}
	n, err := ssg.BuildNeighbours(context.Background(), space, ids, texts, ssg.DefaultListSize, nil)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "lists")
	if err := n.Save(path); err != nil {
		b.Fatal(err)
	}
	return path
}

// sized is a bleve.Index whose searches ask for size hits, whatever the
// request's size.
type sized struct {
	sizedBase
	size int
}

// sizedBase lets sized embed bleve.Index: embedding the interface type
// directly would clash with its Index method.
type sizedBase = bleve.Index

func (x sized) Search(req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	r := *req
	r.Size = x.size
	return x.sizedBase.Search(&r)
}

// interleaved searches each of systems in turn for the top 10 hits of one
// query after another (p's first-stage query of its text), and reports the
// mean time of the first, the bare search, and each other's ratio of means
// to it, under names: a noisy machine's swings fall on all of them alike.
func interleaved(b *testing.B, p *rerank.Pipeline, queries []dataset.Query, names []string, systems ...bleve.Index) {
	var qs []query.Query
	for _, q := range queries {
		if bq, err := p.Query(q.FullText()); err == nil {
			qs = append(qs, bq)
		}
	}
	spent := make([]time.Duration, len(systems))
	n := 0
	for b.Loop() {
		q := qs[n%len(qs)]
		n++
		for i, sys := range systems {
			start := time.Now()
			if _, err := sys.Search(bleve.NewSearchRequestOptions(q, 10, 0, false)); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(start)
		}
	}
	b.ReportMetric(float64(spent[0].Microseconds())/float64(n), "µs/bare")
	for i, name := range names {
		b.ReportMetric(float64(spent[i+1])/float64(spent[0]), name+"/bare")
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
	return ds, compactedIndex(b, ds, encs)
}

// compactedIndex indexes the corpus of ds with encs' payloads into a
// compacted semrank index, closed when b ends.
func compactedIndex(b *testing.B, ds *dataset.Dataset, encs []index.PayloadEncoder) *index.Index {
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
	return idx
}

// sharedCACM returns ../shared/data/cacm beside the module root, or skips.
func sharedCACM(b *testing.B) string {
	p := filepath.Join(filepath.Dir(sharedData(b)), "cacm")
	if _, err := os.Stat(p); err != nil {
		b.Skip("shared CACM data not found beside the repository")
	}
	return p
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
	b.ResetTimer()
	interleaved(b, fromText, ds.Queries[:50], []string{"text", "attached"}, plain, rerank.Wrap(plain, fromText), rerank.Wrap(a, attached))
}
