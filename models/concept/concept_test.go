package concept

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/models"
)

func TestSparseOps(t *testing.T) {
	a := Sparse{Idx: []int{0, 2, 5}, Val: []float64{1, 2, 3}}
	b := Sparse{Idx: []int{2, 3, 5}, Val: []float64{4, 1, -1}}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"dot", a.Dot(b), 2*4 - 3},
		{"norm", a.Norm(), math.Sqrt(14)},
		{"cosine", a.Cosine(b), 5 / (math.Sqrt(14) * math.Sqrt(18))},
		{"cosine with zero", a.Cosine(Sparse{}), 0},
		{"normalized norm", a.Normalized().Norm(), 1},
		{"dense cosine", Cosine(a.Dense(6), b.Dense(6)), a.Cosine(b)},
	} {
		if math.Abs(tc.got-tc.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestSpaceWeights(t *testing.T) {
	texts := []string{"cars and cars in Doha", "renting a car in Doha", "visa for my family", "family visa rules"}
	s, err := BuildSpace(texts, SpaceConfig{MinDF: 1, MaxDFRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	car, ok := s.Lookup("car")
	if !ok {
		t.Fatalf("no term car in %v", s.Terms)
	}
	v := s.Vector("car car visa", TFIDF)
	if v.Len() != 2 {
		t.Fatalf("vector %+v", v)
	}
	want := 2 * math.Log(4.0/2)
	for i, j := range v.Idx {
		if j == car && math.Abs(v.Val[i]-want) > 1e-12 {
			t.Errorf("tf-idf of car = %v, want %v", v.Val[i], want)
		}
	}
	if n := s.Vector("car car visa", TFIDFNorm).Norm(); math.Abs(n-1) > 1e-12 {
		t.Errorf("normalised norm %v", n)
	}
	for _, x := range s.Vector("car car visa", Binary).Val {
		if x != 1 {
			t.Errorf("binary weight %v", x)
		}
	}
	if w := s.Weigh(map[string]float64{"car": 0.5, "zebra": 9}); w.Len() != 1 || w.Val[0] != 0.5 {
		t.Errorf("Weigh = %+v", w)
	}
	if _, err := BuildSpace(texts, SpaceConfig{MinDF: 10}); err == nil {
		t.Error("empty vocabulary accepted")
	}
	b := models.New("test", 1)
	s.AddTo(b)
	got, err := SpaceFrom(b)
	if err != nil || got.Hash() != s.Hash() || got.N != s.N {
		t.Errorf("round trip: %v", err)
	}
	b.Manifest.VocabHash = "0000"
	if _, err := SpaceFrom(b); err == nil {
		t.Error("vocabulary hash mismatch accepted")
	}
}

// TestSpaceRecordsAnalyzer: the terms of a space are analyzers.Tokens, so
// a space from another version of that analyzer is refused, and one saved
// before analyzers were recorded loads and is saved back as it was.
func TestSpaceRecordsAnalyzer(t *testing.T) {
	s, err := BuildSpace([]string{"renting a car in Doha", "cars in Doha"}, SpaceConfig{MinDF: 1, MaxDFRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := models.New("test", 1)
	s.AddTo(b)
	if b.Manifest.Analyzer != analyzers.ID() {
		t.Fatalf("space records analyzer %q, want %q", b.Manifest.Analyzer, analyzers.ID())
	}
	for _, tc := range []struct {
		recorded string
		ok       bool
	}{{analyzers.ID(), true}, {"semrank_en/0", false}, {analyzers.WordsID(), false}, {"", true}} {
		b.Manifest.Analyzer = tc.recorded
		got, err := SpaceFrom(b)
		if !tc.ok {
			if !errors.Is(err, models.ErrAnalyzerMismatch) {
				t.Errorf("space recording %q: err = %v, want an analyzer mismatch", tc.recorded, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("space recording %q: %v", tc.recorded, err)
		}
		again := models.New("test", 1)
		got.AddTo(again)
		if again.Manifest.Analyzer != tc.recorded {
			t.Errorf("space recording %q saved back as %q", tc.recorded, again.Manifest.Analyzer)
		}
	}
}

func TestJudgedListsAndFolds(t *testing.T) {
	ds, err := dataset.Load("../../testdata/concepts/semeval-b")
	if err != nil {
		t.Fatal(err)
	}
	lists, err := JudgedLists(ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(lists) != 8 || len(lists[0].Docs) != 10 {
		t.Fatalf("%d lists, first has %d docs", len(lists), len(lists[0].Docs))
	}
	// Scoring by the given order must reproduce the IR baseline's ranking.
	scores := make([][]float64, len(lists))
	for i, l := range lists {
		scores[i] = l.Scores
	}
	res, err := Evaluate(lists, scores, eval.MustParseMetrics("map@10"))
	if err != nil || res.Mean[0] <= 0 || res.Mean[0] > 1 {
		t.Errorf("MAP %v, %v", res.Mean, err)
	}
	folds, err := Folds(lists, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range folds {
		for _, l := range f {
			if seen[l.QueryID] {
				t.Errorf("query %s in two folds", l.QueryID)
			}
			seen[l.QueryID] = true
		}
	}
	if len(seen) != len(lists) {
		t.Errorf("folds cover %d of %d queries", len(seen), len(lists))
	}
	tr, held := Split(lists, 0.25, 1)
	if len(tr) != 6 || len(held) != 2 {
		t.Errorf("split %d/%d", len(tr), len(held))
	}
	var data Data
	data.AddCorpus(ds, true)
	if len(data.Texts) != 88 || len(data.Pairs) == 0 {
		t.Errorf("%d texts, %d pairs", len(data.Texts), len(data.Pairs))
	}
}

func TestVectorCodec(t *testing.T) {
	v := []float64{1, -0.5, 3.25, 0}
	got, err := DecodeVector(EncodeVector(v), 4)
	if err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if got[i] != v[i] {
			t.Errorf("value %d: %v ≠ %v", i, got[i], v[i])
		}
	}
	for _, tc := range []struct {
		name string
		b    []byte
		dim  int
	}{
		{"short", EncodeVector(v)[:15], 4},
		{"wrong dim", EncodeVector(v), 3},
		{"nan", EncodeVector([]float64{math.NaN()}), 1},
	} {
		if _, err := DecodeVector(tc.b, tc.dim); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func FuzzDecodeVector(f *testing.F) {
	f.Add(EncodeVector([]float64{1, 2}), 2)
	f.Add([]byte{1, 2, 3}, 1)
	f.Fuzz(func(t *testing.T, b []byte, dim int) {
		if dim < 0 || dim > 1<<16 {
			return
		}
		v, err := DecodeVector(b, dim)
		if err == nil && len(v) != dim {
			t.Fatalf("decoded %d values for dimension %d", len(v), dim)
		}
	})
}

// FuzzCosineEncoded: the cosine read off an encoded vector is Cosine of
// the decoded one to the last bit, as is CosineStored's from the decoded
// values and the two norms, and malformed input is an error exactly when
// decoding refuses it.
func FuzzCosineEncoded(f *testing.F) {
	f.Add(EncodeVector([]float64{1, 2, -0.5}), 0.25, -3.0, 7.5)
	f.Add(EncodeVector([]float64{math.NaN(), 1, 2}), 1.0, 1.0, 1.0)
	f.Add([]byte{1, 2, 3}, 1.0, 0.0, 0.0)
	f.Add(EncodeVector([]float64{0, 0, 0}), 1.0, 2.0, 3.0)
	f.Fuzz(func(t *testing.T, b []byte, a0, a1, a2 float64) {
		a := []float64{a0, a1, a2}
		for _, x := range a {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return
			}
		}
		got, err := CosineEncoded(a, SquaredNorm(a), b)
		v, derr := DecodeVector(b, len(a))
		if (err == nil) != (derr == nil) {
			t.Fatalf("CosineEncoded error %v, DecodeVector error %v", err, derr)
		}
		if err != nil {
			return
		}
		want := Cosine(a, v)
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("CosineEncoded = %v, Cosine of the decoded vector %v", got, want)
		}
		v32 := make([]float32, len(v))
		for i, x := range v {
			v32[i] = float32(x)
		}
		if stored := CosineStored(a, SquaredNorm(a), v32, SquaredNorm(v)); math.Float64bits(stored) != math.Float64bits(want) && !(math.IsNaN(stored) && math.IsNaN(want)) {
			t.Fatalf("CosineStored = %v, Cosine %v", stored, want)
		}
	})
}

// TestCosinesStored: the cosines taken four at a time are CosineStored's
// to the last bit, for any number of vectors (the groups of four and the
// rest), zero vectors and zero queries included.
func TestCosinesStored(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name string
		dim  int
		n    int
		zero bool // the query is zero
	}{
		{"none", 8, 0, false},
		{"fewer than four", 8, 3, false},
		{"four", 16, 4, false},
		{"groups and a rest", 200, 11, false},
		{"zero query", 5, 6, true},
		{"empty vectors", 0, 5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := make([]float64, tc.dim)
			for i := range a {
				if !tc.zero {
					a[i] = rng.NormFloat64() * 1e3
				}
			}
			bs := make([][]float32, tc.n)
			nbs := make([]float64, tc.n)
			for k := range bs {
				bs[k] = make([]float32, tc.dim)
				v := make([]float64, tc.dim)
				for i := range v {
					if k%5 != 2 { // every fifth vector zero
						bs[k][i] = float32(rng.NormFloat64())
					}
					v[i] = float64(bs[k][i])
				}
				nbs[k] = SquaredNorm(v)
			}
			na := SquaredNorm(a)
			out := make([]float64, tc.n)
			CosinesStored(a, na, bs, nbs, out)
			for k := range bs {
				if want := CosineStored(a, na, bs[k], nbs[k]); math.Float64bits(out[k]) != math.Float64bits(want) {
					t.Errorf("vector %d: CosinesStored %v, CosineStored %v", k, out[k], want)
				}
			}
		})
	}
}

func TestPlotCurve(t *testing.T) {
	curve := []Iteration{
		{Iter: 1, Phase: "rbm-1", Loss: 3, DevMAP: NoDev},
		{Iter: 2, Phase: "rbm-1", Loss: 2, DevMAP: NoDev},
		{Iter: 0, Phase: "finetune", Loss: 1, DevMAP: 0.6},
		{Iter: 1, Phase: "finetune", Loss: 0.5, DevMAP: 0.7},
	}
	for _, name := range []string{"c.png", "c.svg"} {
		path := filepath.Join(t.TempDir(), name)
		if err := PlotCurve(path, "test", curve); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v, %v", name, st, err)
		}
	}
	if err := PlotCurve(filepath.Join(t.TempDir(), "x.png"), "", nil); err == nil {
		t.Error("empty curve plotted")
	}
	// A diverged training: an error, not gonum/plot's panic.
	for _, bad := range []float64{math.Inf(1), math.NaN()} {
		diverged := append(slices.Clone(curve), Iteration{Iter: 2, Phase: "finetune", Loss: bad, DevMAP: 0.7})
		if err := PlotCurve(filepath.Join(t.TempDir(), "x.png"), "", diverged); err == nil || !strings.Contains(err.Error(), "nothing to plot") {
			t.Errorf("loss %v: err = %v", bad, err)
		}
	}
}
