package tweak

import (
	"bytes"
	"context"
	"testing"

	"github.com/semrank/semrank/models/internal/modeltest"
)

// savedModel returns the file of a model trained on the test data.
func savedModel(tb testing.TB) []byte {
	tb.Helper()
	set := testSet(tb, true)
	m, err := Train(context.Background(), set, Config{Loss: LossPreference, Alpha: 0.1, QueryLog: true, MaxIterations: 5}, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return modeltest.SavedFile(tb, m.Save)
}

// loadScore loads a model file and scores a few of the test documents.
func loadScore(tb testing.TB) modeltest.LoadScore {
	ds := testData(tb)
	return func(raw []byte, name string) ([]float64, error) {
		m, err := Read(bytes.NewReader(raw), name)
		if err != nil {
			return nil, err
		}
		var s []float64
		for _, q := range ds.Queries[:2] {
			for _, d := range ds.Corpus[:5] {
				s = append(s, m.Score(q.FullText(), d.Title, d.Text))
			}
		}
		return s, nil
	}
}

func TestCorruptModels(t *testing.T) { modeltest.Corruptions(t, savedModel(t), loadScore(t)) }

func FuzzCorruptModel(f *testing.F) { modeltest.Fuzz(f, savedModel(f), loadScore(f)) }
