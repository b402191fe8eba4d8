package translation

import (
	"bytes"
	"context"
	"testing"

	"github.com/semrank/semrank/models/internal/modeltest"
)

func savedModel(tb testing.TB) []byte {
	tb.Helper()
	m, err := Train(context.Background(), forum, nil, toyConfig())
	if err != nil {
		tb.Fatal(err)
	}
	return modeltest.Saved(tb, m)
}

// loadScore scores a question with a word outside the vocabulary
// ("zeppelin"), so that the background probability of an unknown word is
// scored too: without it, any value there loaded unnoticed.
func loadScore(raw []byte, name string) ([]float64, error) {
	m, err := Read(bytes.NewReader(raw), name)
	if err != nil {
		return nil, err
	}
	return m.Score("How much is a flat near the zeppelin road?", []string{"2000 riyals", "Salwa Road", "", "zeppelin"}), nil
}

func TestCorruptModel(t *testing.T) { modeltest.Corruptions(t, savedModel(t), loadScore) }

func FuzzCorruptModel(f *testing.F) { modeltest.Fuzz(f, savedModel(f), loadScore) }
