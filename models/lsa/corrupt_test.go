package lsa

import (
	"bytes"
	"testing"

	"github.com/semrank/semrank/models/internal/modeltest"
)

func savedModel(tb testing.TB) []byte {
	tb.Helper()
	m, err := Train(semevalTexts(tb), Config{Dim: 4})
	if err != nil {
		tb.Fatal(err)
	}
	return modeltest.Saved(tb, m)
}

// loadScore loads a model file and embeds and compares a few test texts.
func loadScore(tb testing.TB) modeltest.LoadScore {
	texts := semevalTexts(tb)
	return func(raw []byte, name string) ([]float64, error) {
		m, err := Read(bytes.NewReader(raw), name)
		if err != nil {
			return nil, err
		}
		s := m.Embed(texts[0])
		for _, d := range texts[1:4] {
			s = append(s, m.Similarity(texts[0], d))
		}
		return s, nil
	}
}

func TestCorruptModels(t *testing.T) { modeltest.Corruptions(t, savedModel(t), loadScore(t)) }

func FuzzCorruptModel(f *testing.F) { modeltest.Fuzz(f, savedModel(f), loadScore(f)) }
