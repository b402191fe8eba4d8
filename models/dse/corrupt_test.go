package dse

import (
	"bytes"
	"context"
	"testing"

	"github.com/semrank/semrank/models/internal/modeltest"
)

func savedModel(tb testing.TB) []byte {
	tb.Helper()
	m, _, err := Train(context.Background(), loadData(tb), Config{D: 40, Hidden: []int{6}, C: 4, PretrainEpochs: 1, FineTuneEpochs: 1, Batch: 32, Seed: 3}, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return modeltest.Saved(tb, m)
}

// loadScore loads a model file and embeds and compares a few test texts.
func loadScore(tb testing.TB) modeltest.LoadScore {
	l := loadData(tb).Lists[0]
	return func(raw []byte, name string) ([]float64, error) {
		m, err := Read(bytes.NewReader(raw), name)
		if err != nil {
			return nil, err
		}
		s := m.Embed(l.Query)
		for _, d := range l.Docs[:3] {
			s = append(s, m.Score(m.Embed(l.Query), m.Embed(d), m.TFIDFCosine(l.Query, d)))
		}
		return s, nil
	}
}

func TestCorruptModels(t *testing.T) { modeltest.Corruptions(t, savedModel(t), loadScore(t)) }

func FuzzCorruptModel(f *testing.F) { modeltest.Fuzz(f, savedModel(f), loadScore(f)) }
