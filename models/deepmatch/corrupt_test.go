package deepmatch

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

func savedModel(tb testing.TB, method string) []byte {
	tb.Helper()
	train, dev := semevalSlice(tb)
	cfg := smallConfig(method)
	cfg.Epochs = 1
	m, err := Train(context.Background(), train[:10], dev[:3], cfg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return modeltest.SavedFile(tb, m.Save)
}

// loadScore loads a model file and scores a test query's candidates;
// the training curve's values come with the scores.
func loadScore(tb testing.TB, method string) modeltest.LoadScore {
	_, dev := semevalSlice(tb)
	return func(raw []byte, name string) ([]float64, error) {
		m, err := Read(bytes.NewReader(raw), name, method)
		if err != nil {
			return nil, err
		}
		s := append(m.ScoreQuery(dev[0]), m.ScoreQuery(dev[1])...)
		for _, p := range m.Curve {
			s = append(s, p.Loss, p.DevMAP)
		}
		return s, nil
	}
}

func TestCorruptModels(t *testing.T) {
	for _, method := range []string{MethodDeepMatch, MethodBilinear, MethodSiamese} {
		t.Run(method, func(t *testing.T) {
			modeltest.Corruptions(t, savedModel(t, method), loadScore(t, method))
		})
	}
}

func FuzzCorruptDeepMatch(f *testing.F) {
	modeltest.Fuzz(f, savedModel(f, MethodDeepMatch), loadScore(f, MethodDeepMatch))
}

func FuzzCorruptSiamese(f *testing.F) {
	modeltest.Fuzz(f, savedModel(f, MethodSiamese), loadScore(f, MethodSiamese))
}

// TestLoadRefusesDamagedSections: a section that is there but damaged is
// an error naming it, not skipped (the training curve would be lost when
// the model is saved again) or half read (ids past the last offset).
func TestLoadRefusesDamagedSections(t *testing.T) {
	raw := savedModel(t, MethodDeepMatch)
	b, err := models.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	curve, err := b.Tensor("curve", 2)
	if err != nil || curve.Shape[0] == 0 {
		t.Fatalf("saved model has no curve: %v", err)
	}
	ids, err := b.Tensor("level0_x_ids", 1)
	if err != nil {
		t.Fatal(err)
	}
	off, err := b.Tensor("level0_x_off", 1)
	if err != nil {
		t.Fatal(err)
	}
	edited := func(v []float64, i int, x float64) []float64 {
		v = slices.Clone(v)
		v[i] = x
		return v
	}
	for _, tc := range []struct {
		what, section string
		shape         []int
		data          []float64
	}{
		{"curve flattened", "curve", []int{len(curve.Data)}, curve.Data},
		{"curve with a NaN loss", "curve", curve.Shape, edited(curve.Data, 1, math.NaN())},
		{"curve with an infinite dev MAP", "curve", curve.Shape, edited(curve.Data, 2, math.Inf(1))},
		{"curve with a fractional epoch", "curve", curve.Shape, edited(curve.Data, 0, 0.5)},
		{"curve with a negative epoch", "curve", curve.Shape, edited(curve.Data, 0, -1)},
		{"ids past the last offset", "level0_x_ids", []int{len(ids.Data) + 1}, append(slices.Clone(ids.Data), 0)},
		{"offsets not from 0", "level0_x_off", off.Shape, edited(off.Data, 0, 1)},
		{"fractional offset", "level0_x_off", off.Shape, edited(off.Data, 1, off.Data[1]+0.5)},
		{"offset past the ids", "level0_x_off", off.Shape, edited(off.Data, 1, float64(len(ids.Data)+100))},
	} {
		b, _ := models.Parse(raw)
		b.AddTensor(tc.section, tc.shape, tc.data)
		var buf bytes.Buffer
		if _, err := b.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		_, err := Read(&buf, "damaged.model", MethodDeepMatch)
		if err == nil || !strings.Contains(err.Error(), "damaged.model") || !strings.Contains(err.Error(), strings.TrimSuffix(strings.TrimSuffix(tc.section, "_ids"), "_off")) {
			t.Errorf("%s: err = %v, want an error naming the file and %s", tc.what, err, tc.section)
		}
	}
}
