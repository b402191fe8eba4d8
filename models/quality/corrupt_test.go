package quality

import (
	"bytes"
	"context"
	"testing"

	"github.com/semrank/semrank/models/internal/modeltest"
)

func savedModel(tb testing.TB) []byte {
	tb.Helper()
	m, err := Train(context.Background(), chatAndAnswers(20), Config{Bigrams: true, Chars: true, Context: []string{"asker"}})
	if err != nil {
		tb.Fatal(err)
	}
	return modeltest.Saved(tb, m)
}

// loadScore loads a model file and scores a few texts.
func loadScore(raw []byte, name string) ([]float64, error) {
	m, err := Read(bytes.NewReader(raw), name)
	if err != nil {
		return nil, err
	}
	var s []float64
	for _, e := range chatAndAnswers(3) {
		s = append(s, m.Score(e.Text), m.Score(e.Text, "asker"))
	}
	return s, nil
}

func TestCorruptModels(t *testing.T) { modeltest.Corruptions(t, savedModel(t), loadScore) }

func FuzzCorruptModel(f *testing.F) { modeltest.Fuzz(f, savedModel(f), loadScore) }
