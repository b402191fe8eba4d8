package embed

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/models/internal/modeltest"
)

func savedVectors(tb testing.TB) []byte {
	tb.Helper()
	var sents [][]string
	for range 50 {
		sents = append(sents, []string{"bank", "loan", "salary"}, []string{"beach", "desert", "sand"})
	}
	cfg := Config{Dim: 4, Epochs: 1, PruneTop: -1}
	v, err := Train(context.Background(), sents, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := v.Bundle(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return modeltest.Encode(tb, b)
}

// loadVectors loads a vectors file and returns its vectors and counts.
func loadVectors(raw []byte, name string) ([]float64, error) {
	v, err := Read(bytes.NewReader(raw), name)
	if err != nil {
		return nil, err
	}
	var s []float64
	for _, w := range []string{"bank", "sand", "unseen"} {
		if x, ok := v.Lookup(w); ok {
			s = append(s, x...)
		}
	}
	for i := range v.Len() {
		s = append(s, v.Vector(i)...)
	}
	return append(s, v.Counts...), nil
}

func TestCorruptVectors(t *testing.T) { modeltest.Corruptions(t, savedVectors(t), loadVectors) }

func FuzzCorruptVectors(f *testing.F) { modeltest.Fuzz(f, savedVectors(f), loadVectors) }

// TestLoadRefusesDamagedCounts: counts are optional, but a counts section
// that is there and damaged is an error naming it, not skipped (it would
// be lost when the vectors are saved again) or kept with NaN or negative
// counts.
func TestLoadRefusesDamagedCounts(t *testing.T) {
	raw := savedVectors(t)
	b, err := models.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.Tensor("counts", 1)
	if err != nil {
		t.Fatal(err)
	}
	n := len(c.Data)
	edited := func(i int, x float64) []float64 {
		v := slices.Clone(c.Data)
		v[i] = x
		return v
	}
	for _, tc := range []struct {
		what  string
		shape []int
		data  []float64
	}{
		{"counts given a leading dimension", []int{1, n}, c.Data},
		{"one count short", []int{n - 1}, c.Data[:n-1]},
		{"a NaN count", c.Shape, edited(0, math.NaN())},
		{"an infinite count", c.Shape, edited(n-1, math.Inf(1))},
		{"a negative count", c.Shape, edited(0, -1)},
		{"a fractional count", c.Shape, edited(0, 0.5)},
	} {
		b, _ := models.Parse(raw)
		b.AddTensor("counts", tc.shape, tc.data)
		var buf bytes.Buffer
		if _, err := b.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		_, err := Read(&buf, "damaged.model")
		if err == nil || !strings.Contains(err.Error(), "damaged.model") || !strings.Contains(err.Error(), "count") {
			t.Errorf("%s: err = %v, want an error naming the file and the counts", tc.what, err)
		}
	}
}
