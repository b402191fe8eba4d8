package stages

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/deepmatch"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
)

// BenchmarkDeepMatch100 times scoring 100 candidates for one query with each
// learned matcher and, as the baseline in the same run, TF-IDF cosine over
// the same candidates. Report the ratio of ns/op to tfidf's.
func BenchmarkDeepMatch100(b *testing.B) {
	ds, err := dataset.Load("../../testdata/deepmatch/semeval-a")
	if err != nil {
		b.Fatal(err)
	}
	qs, err := deepmatch.FromDataset(ds)
	if err != nil {
		b.Fatal(err)
	}
	var cands []rerank.Candidate
	var texts []string
	for _, q := range qs {
		for _, c := range q.Cands {
			if len(cands) < 100 {
				cands = append(cands, rerank.Candidate{Doc: dataset.Doc{ID: c.ID, Text: c.Text, Metadata: c.Meta}})
			}
			texts = append(texts, c.Text)
		}
	}
	query := rerank.Query{Text: qs[0].Text}
	dir := b.TempDir()
	stages := map[string]rerank.Stage{"tfidf": &TFIDF{Stats: tweak.CountDF(texts)}}
	for _, method := range []string{deepmatch.MethodDeepMatch, deepmatch.MethodBilinear, deepmatch.MethodSiamese} {
		cfg := deepmatch.DefaultConfig(method)
		cfg.MinDF, cfg.Epochs, cfg.LDAIterations = 1, 1, 20
		m, err := deepmatch.Train(context.Background(), qs, nil, cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(dir, method)
		if err := m.Save(path); err != nil {
			b.Fatal(err)
		}
		if stages[method], err = rerank.NewStage(rerank.StageSpec{Type: method, Model: path}, rerank.Env{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, name := range []string{"tfidf", deepmatch.MethodDeepMatch, deepmatch.MethodBilinear, deepmatch.MethodSiamese} {
		st := stages[name]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := st.Score(context.Background(), query, cands); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
