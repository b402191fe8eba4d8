package quality

import (
	"context"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// BenchmarkScore scores the comments of the SemEval A slice in testdata
// with a model trained on them; Features (the training-time path) is timed
// in the same run as the baseline.
func BenchmarkScore(b *testing.B) {
	ds, err := dataset.Load("../../testdata/deepmatch/semeval-a")
	if err != nil {
		b.Fatal(err)
	}
	var ex []Example
	for _, d := range ds.Corpus {
		ex = append(ex, Example{Text: d.FullText(), Good: len(ex)%3 == 0})
	}
	m, err := Train(context.Background(), ex, Config{Bigrams: true, Chars: true, MaxIterations: 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("features", func(b *testing.B) {
		i := 0
		for b.Loop() {
			Features(ex[i%len(ex)].Text, true, true)
			i++
		}
	})
	b.Run("score", func(b *testing.B) {
		i := 0
		for b.Loop() {
			m.Score(ex[i%len(ex)].Text)
			i++
		}
	})
	b.Run("tokens", func(b *testing.B) {
		i := 0
		for b.Loop() {
			Tokens(ex[i%len(ex)].Text)
			i++
		}
	})
}
