package tweak

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/models/internal/modeltest"
)

func trainedModel(t *testing.T) *Model {
	t.Helper()
	set := testSet(t, true)
	m, err := Train(context.Background(), set, Config{Loss: LossPreference, Alpha: 0.1, QueryLog: true, MaxIterations: 20}, Options{Dev: set})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSaveLoadRoundTrip(t *testing.T) {
	m := trainedModel(t)
	path := filepath.Join(t.TempDir(), "tweak.model")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.W, m.W) || got.Config != m.Config || got.ID() != m.ID() || got.Fingerprint != m.Fingerprint {
		t.Fatalf("round trip changed the model: %+v vs %+v", got, m)
	}
	if got.DF.N != m.DF.N || len(got.DF.Count) != len(m.DF.Count) || len(got.QF.Count) != len(m.QF.Count) {
		t.Fatal("frequency tables changed")
	}
	if got.Metrics["dev_map@10"] != m.Metrics["dev_map@10"] {
		t.Error("dev metric lost")
	}
	ds := testData(t)
	q := ds.Queries[3].FullText()
	for _, d := range ds.Corpus[:10] {
		if a, b := m.Score(q, d.Title, d.Text), got.Score(q, d.Title, d.Text); a != b {
			t.Errorf("%s: score %v before save, %v after", d.ID, a, b)
		}
	}
	if !strings.HasPrefix(got.ID(), "tweak-") {
		t.Errorf("ID %q", got.ID())
	}
}

// TestRecordsAnalyzer: TWEAK's frequency tables count analyzers.Tokens
// terms, so a model from another version of that analyzer is refused.
func TestRecordsAnalyzer(t *testing.T) {
	modeltest.Analyzer(t, trainedModel(t), analyzers.ID(), Load, (*Model).Save)
}

func TestLoadRefusesBadFiles(t *testing.T) {
	m := trainedModel(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.model")
	if err := m.Save(good); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flipped := append([]byte(nil), raw...)
	flipped[len(flipped)/2] ^= 0x40
	other := models.New("s2net", 1)
	other.AddTensor("A", []int{1}, []float64{1})
	otherPath := filepath.Join(dir, "s2net.model")
	if err := other.Save(otherPath); err != nil {
		t.Fatal(err)
	}
	// A well-formed tweak bundle computing other features.
	b, err := m.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	b.AddStrings(secFeatures, append(append([]string(nil), FeatureNames[:NumFeatures-1]...), "url"))
	featPath := filepath.Join(dir, "features.model")
	if err := b.Save(featPath); err != nil {
		t.Fatal(err)
	}
	b, _ = m.Bundle()
	b.AddTensor(secWeights, []int{3}, []float64{1, 2, 3})
	shapePath := filepath.Join(dir, "shape.model")
	if err := b.Save(shapePath); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"flipped byte", write("flipped.model", flipped), "checksum"},
		{"truncated", write("trunc.model", raw[:len(raw)-10]), "checksum"},
		{"empty", write("empty.model", nil), "truncated"},
		{"other method", otherPath, `"s2net" model`},
		{"other features", featPath, "features"},
		{"bad weights shape", shapePath, "weights"},
		{"missing", filepath.Join(dir, "absent.model"), "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load: %v, want error containing %q", err, tt.want)
			}
			if strings.Contains(tt.want, "checksum") && !errors.Is(err, models.ErrCorrupt) {
				t.Errorf("error %v does not wrap ErrCorrupt", err)
			}
		})
	}
}
