package topics

import (
	"bytes"
	"context"
	"testing"

	"github.com/semrank/semrank/models/internal/modeltest"
)

func savedModel(tb testing.TB) []byte {
	tb.Helper()
	docs, _ := planted(120)
	m, err := Train(context.Background(), docs, Config{K: 3})
	if err != nil {
		tb.Fatal(err)
	}
	return modeltest.Saved(tb, m)
}

// loadScore loads a model file and places a few documents.
func loadScore(raw []byte, name string) ([]float64, error) {
	m, err := Read(bytes.NewReader(raw), name)
	if err != nil {
		return nil, err
	}
	docs, _ := planted(6)
	var s []float64
	for l := range m.Topics {
		s = append(s, float64(m.Farthest(l)))
	}
	for _, d := range append(docs, []string{"unseen"}, nil) {
		r := m.Represent(d)
		s = append(append(s, float64(r.Cluster)), r.Catch...)
		for _, w := range d {
			s = append(s, m.IDF(w))
		}
	}
	return s, nil
}

func TestCorruptModels(t *testing.T) { modeltest.Corruptions(t, savedModel(t), loadScore) }

func FuzzCorruptModel(f *testing.F) { modeltest.Fuzz(f, savedModel(f), loadScore) }
