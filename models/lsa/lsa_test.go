package lsa

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/internal/modeltest"
)

// lowRank returns n sparse columns of a d×n matrix of exact rank r plus
// noise of the given scale.
func lowRank(d, n, r int, noise float64, seed uint64) []concept.Sparse {
	rng := rand.New(rand.NewPCG(seed, 1))
	u := mat.NewDense(d, r, nil)
	v := mat.NewDense(r, n, nil)
	for i := range d {
		for j := range r {
			u.Set(i, j, rng.NormFloat64())
		}
	}
	for i := range r {
		for j := range n {
			v.Set(i, j, rng.NormFloat64()*float64(r-i))
		}
	}
	var x mat.Dense
	x.Mul(u, v)
	docs := make([]concept.Sparse, n)
	for j := range n {
		for i := range d {
			docs[j].Idx = append(docs[j].Idx, i)
			docs[j].Val = append(docs[j].Val, x.At(i, j)+noise*rng.NormFloat64())
		}
	}
	return docs
}

// TestRandomizedSVDMatchesExact checks that the documents reach package
// rsvd as the matrix they are: on an exactly low-rank matrix both SVDs
// agree (rsvd's own tests cover the randomized method).
func TestRandomizedSVDMatchesExact(t *testing.T) {
	const d, n, r, k = 60, 80, 8, 5
	docs := lowRank(d, n, r, 0, 7)
	ue, se, err := exactSVD(d, docs, k)
	if err != nil {
		t.Fatal(err)
	}
	ur, sr, err := randomizedSVD(d, docs, k, 10, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range k {
		if rel := math.Abs(se[i]-sr[i]) / se[i]; rel > 1e-9 {
			t.Errorf("σ%d: exact %g randomized %g", i, se[i], sr[i])
		}
		if c := math.Abs(mat.Dot(ue.ColView(i), ur.ColView(i))); 1-c > 1e-9 {
			t.Errorf("u%d: |cos| between exact and randomized = %g", i, c)
		}
	}
}

func semevalTexts(t testing.TB) []string {
	t.Helper()
	ds, err := dataset.Load("../../testdata/concepts/semeval-b")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, d := range ds.Corpus {
		texts = append(texts, d.FullText())
	}
	for _, q := range ds.Queries {
		texts = append(texts, q.FullText())
	}
	return texts
}

func TestTrainSaveLoad(t *testing.T) {
	texts := semevalTexts(t)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"exact", Config{Dim: 10}},
		{"randomized", Config{Dim: 10, ExactMaxCells: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Train(texts, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if m.Dim() != 10 || len(m.Embed(texts[0])) != 10 {
				t.Fatalf("dim = %d", m.Dim())
			}
			for i := 1; i < len(m.Sigma); i++ {
				if m.Sigma[i] > m.Sigma[i-1]+1e-9 {
					t.Errorf("singular values not descending: %v", m.Sigma)
				}
			}
			if s := m.Similarity(texts[3], texts[3]); math.Abs(s-1) > 1e-12 {
				t.Errorf("self-similarity = %v", s)
			}
			path := filepath.Join(t.TempDir(), "lsa.model")
			if err := m.Save(path); err != nil {
				t.Fatal(err)
			}
			got, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Proj.RawMatrix().Data, m.Proj.RawMatrix().Data) || !reflect.DeepEqual(got.Sigma, m.Sigma) {
				t.Error("projection changed in the round trip")
			}
			if !reflect.DeepEqual(got.Embed(texts[5]), m.Embed(texts[5])) {
				t.Error("embedding changed in the round trip")
			}
			if got.ID() != m.ID() {
				t.Errorf("ID %s ≠ %s", got.ID(), m.ID())
			}
		})
	}
}

func TestLoadRefusesBadFiles(t *testing.T) {
	m, err := Train(semevalTexts(t), Config{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := m.Save(good); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(good)
	flipped := append([]byte(nil), raw...)
	flipped[len(flipped)/2] ^= 0x40
	b, _ := m.Bundle()
	b.Manifest.Method = "s2net"
	other := filepath.Join(dir, "other")
	if err := b.Save(other); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"flipped":   flipped,
		"truncated": raw[:len(raw)-10],
		"empty":     nil,
		"text":      []byte("not a model at all, just some text"),
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil {
			t.Errorf("%s: loaded a damaged model", name)
		}
	}
	if _, err := Load(other); err == nil {
		t.Error("loaded an s2net model as LSA")
	}
	// Tensors that disagree with each other: the error names the file.
	b, _ = m.Bundle()
	b.AddTensor("sigma", []int{1}, []float64{1})
	if err := b.Save(other); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(other); err == nil || !strings.Contains(err.Error(), other) {
		t.Errorf("sigma of the wrong length: err = %v, want an error naming %s", err, other)
	}
	// Non-finite singular values are damage too (experiments read them).
	for _, v := range []float64{math.NaN(), math.Inf(1)} {
		b, _ = m.Bundle()
		sig := append([]float64(nil), m.Sigma...)
		sig[0] = v
		b.AddTensor("sigma", []int{len(sig)}, sig)
		if err := b.Save(other); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(other); err == nil || !strings.Contains(err.Error(), other) {
			t.Errorf("sigma %v: err = %v, want an error naming %s", v, err, other)
		}
	}
}

// TestRecordsAnalyzer: an LSA model's vocabulary holds analyzers.Tokens,
// so a model from another version of that analyzer is refused.
func TestRecordsAnalyzer(t *testing.T) {
	m, err := Train(semevalTexts(t), Config{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	modeltest.Analyzer(t, m, analyzers.ID(), Load, (*Model).Save)
}

func TestTrainRejectsBadConfig(t *testing.T) {
	texts := semevalTexts(t)
	for _, tc := range []struct {
		name  string
		texts []string
		cfg   Config
	}{
		{"too many dims", texts, Config{Dim: 100000}},
		{"bad scheme", texts, Config{Dim: 4, Scheme: "bm42"}},
		{"no texts", nil, Config{Dim: 4}},
	} {
		if _, err := Train(tc.texts, tc.cfg); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestUseExact: the exact SVD only for matrices small in cells and in
// their smaller side, whose cost grows with both.
func TestUseExact(t *testing.T) {
	cfg := Config{}.withDefaults()
	for _, tc := range []struct {
		d, n int
		want bool
	}{
		{300, 200, true},
		{15625, 256, true},
		{256, 15625, true},
		{2100, 1800, false}, // under ExactMaxCells, but 19 s exactly
		{20000, 250, false}, // over ExactMaxCells
		{256, 256, true},
		{257, 257, false},
	} {
		if got := useExact(tc.d, tc.n, cfg); got != tc.want {
			t.Errorf("useExact(%d, %d) = %v, want %v", tc.d, tc.n, got, tc.want)
		}
	}
	if useExact(10, 10, Config{ExactMaxCells: 1}) {
		t.Error("ExactMaxCells 1 still chose the exact SVD")
	}
}
