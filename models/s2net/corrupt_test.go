package s2net

import (
	"bytes"
	"context"
	"testing"

	"github.com/semrank/semrank/models/internal/modeltest"
)

func savedModel(tb testing.TB) []byte {
	tb.Helper()
	m, _, err := Train(context.Background(), loadData(tb), Config{Dim: 4, MaxIter: 2, Seed: 2}, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return modeltest.Saved(tb, m)
}

// loadScore loads a model file and embeds and compares a few test texts.
func loadScore(tb testing.TB) modeltest.LoadScore {
	l := loadData(tb).Lists[0]
	return func(raw []byte, name string) ([]float64, error) {
		m, err := Read(bytes.NewReader(raw), name, nil)
		if err != nil {
			return nil, err
		}
		s := m.Embed(l.Query)
		for _, d := range l.Docs[:3] {
			s = append(s, m.Similarity(l.Query, d))
		}
		return s, nil
	}
}

func TestCorruptModels(t *testing.T) { modeltest.Corruptions(t, savedModel(t), loadScore(t)) }

func FuzzCorruptModel(f *testing.F) { modeltest.Fuzz(f, savedModel(f), loadScore(f)) }
