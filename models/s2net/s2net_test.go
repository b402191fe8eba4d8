package s2net

import (
	"context"
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

func randomSparse(rng *rand.Rand, d, nnz int) concept.Sparse {
	var s concept.Sparse
	for i := range d {
		if rng.IntN(d) < nnz {
			s.Idx = append(s.Idx, i)
			s.Val = append(s.Val, rng.Float64()+0.1)
		}
	}
	if s.Len() == 0 {
		s = concept.Sparse{Idx: []int{rng.IntN(d)}, Val: []float64{1}}
	}
	return s
}

// TestGradientMatchesFiniteDifferences checks the Appendix A gradient,
// including the comparable-pair blocks, against central differences.
func TestGradientMatchesFiniteDifferences(t *testing.T) {
	for _, tc := range []struct {
		name         string
		prefs, links bool
		workers      int
	}{
		{"preference pairs", true, false, 1},
		{"comparable pairs", false, true, 1},
		{"both, parallel", true, true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const d, k, m = 12, 4, 10
			rng := rand.New(rand.NewPCG(5, 6))
			o := &objective{d: d, k: k, gamma: 10, workers: tc.workers}
			for range m {
				o.vecs = append(o.vecs, randomSparse(rng, d, 4))
			}
			if tc.prefs {
				o.prefs = []pref{{0, 1, 2}, {0, 3, 1}, {4, 5, 6}}
				o.wPref = 1.0 / 3
			}
			if tc.links {
				o.blocks = [][]link{{{6, 7}, {8, 9}, {1, 3}}, {{2, 5}, {4, 0}}}
				o.wLink = 0.7 / 16
			}
			a := mat.NewDense(d, k, nil)
			for i := range d {
				for j := range k {
					a.Set(i, j, rng.NormFloat64())
				}
			}
			grad := make([]float64, d*k)
			o.eval(a, grad)
			raw := a.RawMatrix().Data
			const h = 1e-6
			var maxErr float64
			for i := range raw {
				orig := raw[i]
				raw[i] = orig + h
				fp := o.eval(a, nil)
				raw[i] = orig - h
				fm := o.eval(a, nil)
				raw[i] = orig
				num := (fp - fm) / (2 * h)
				err := math.Abs(num-grad[i]) / math.Max(1, math.Abs(num))
				maxErr = math.Max(maxErr, err)
				if err > 1e-5 {
					t.Errorf("∂L/∂A[%d]: analytic %g, numeric %g", i, grad[i], num)
				}
			}
			t.Logf("max relative error %g", maxErr)
		})
	}
}

func TestLogisticStable(t *testing.T) {
	for _, delta := range []float64{-300, -2, 0, 2, 300} {
		l, dl := logistic(10, delta)
		if math.IsNaN(l) || math.IsInf(l, 0) || math.IsNaN(dl) || l < 0 {
			t.Errorf("logistic(10, %v) = %v, %v", delta, l, dl)
		}
	}
	if l, _ := logistic(10, 0); math.Abs(l-math.Log(2)) > 1e-15 {
		t.Errorf("loss at Δ=0 is %v, want log 2", l)
	}
}

func loadData(t testing.TB) concept.Data {
	t.Helper()
	data, _, err := concept.LoadDir("../../testdata/concepts/semeval-b", false)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestTrainLowersLossAndKeepsBestDev trains on real SemEval lists and
// checks that L-BFGS lowers the training loss and that the returned model
// is no worse on the held-out lists than its LSA start.
func TestTrainLowersLossAndKeepsBestDev(t *testing.T) {
	data := loadData(t)
	for _, init := range []string{"lsa", "random"} {
		t.Run(init, func(t *testing.T) {
			cfg := Config{Dim: 8, Init: init, MaxIter: 15, Patience: 15, Block: 32, Seed: 1}
			m, curve, err := Train(context.Background(), data, cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(curve) < 3 {
				t.Fatalf("curve has %d points", len(curve))
			}
			first, last := curve[0], curve[len(curve)-1]
			if !(last.Loss < first.Loss) {
				t.Errorf("loss did not fall: %v → %v", first.Loss, last.Loss)
			}
			best := math.Inf(-1)
			for _, it := range curve {
				best = math.Max(best, it.DevMAP)
			}
			_, dev := concept.Split(data.Lists, 0.2, 1)
			if got := concept.MAP(dev, concept.CosineScores(m, dev)); math.Abs(got-best) > 1e-12 {
				t.Errorf("returned model's dev MAP %v, best on the curve %v", got, best)
			}
		})
	}
}

// TestRefit checks that Config.Refit retrains on every list, held-out
// ones included, when early stopping found a best iteration past the
// start; that it changes nothing when the start was best; and that it is
// ignored when dev lists are given (nothing of the training lists was held
// out). On the test slice, seed 2 with 40% held out improves on its start
// and seed 1 with 20% does not.
func TestRefit(t *testing.T) {
	data := loadData(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		cfg      Config
		dev      bool
		wantSame bool
	}{
		{"best past the start", Config{Seed: 2, DevFrac: 0.4}, false, false},
		{"start was best", Config{Seed: 1, DevFrac: 0.2}, false, true},
		{"dev lists given", Config{Seed: 2, DevFrac: 0.4}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Dim, cfg.MaxIter, cfg.Patience, cfg.Block = 8, 15, 15, 32
			var opt Options
			if tt.dev {
				_, opt.Dev = concept.Split(data.Lists, 0.4, 3)
			}
			stopped, _, err := Train(ctx, data, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Refit = true
			refit, _, err := Train(ctx, data, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			if same := mat.Equal(stopped.A, refit.A); same != tt.wantSame {
				t.Errorf("refit projection equal to the early-stopped one: %v, want %v", same, tt.wantSame)
			}
		})
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	data := loadData(t)
	m, _, err := Train(context.Background(), data, Config{Dim: 6, MaxIter: 3, Seed: 2}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s2net.model")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.A.RawMatrix().Data, m.A.RawMatrix().Data) {
		t.Error("A changed in the round trip")
	}
	text := data.Lists[0].Query
	if !reflect.DeepEqual(got.Embed(text), m.Embed(text)) || got.ID() != m.ID() {
		t.Error("loaded model differs")
	}
	enc := got.PayloadEncoder("")
	p, err := enc.EncodePayload(dataset.Doc{ID: "x", Title: "car rental", Text: text})
	if err != nil || len(p) != 4*6 || enc.ModelID() != m.ID() || enc.PayloadName() != "s2net" {
		t.Errorf("payload %d bytes, %v, %s", len(p), err, enc.ModelID())
	}

	raw, _ := os.ReadFile(path)
	raw[len(raw)-40] ^= 1
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, raw, 0o644)
	if _, err := Load(bad, nil); err == nil {
		t.Error("loaded a corrupted model")
	}
	if _, err := Load(path, fixedWeights{}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("loaded a TF-IDF model with a term-weighting model, or the error does not name %s: %v", path, err)
	}
	// The vocabulary holds analyzers.Tokens terms: a model from another
	// version of that analyzer is refused.
	load := func(p string) (*Model, error) { return Load(p, nil) }
	modeltest.Analyzer(t, m, analyzers.ID(), load, (*Model).Save)
}

// fixedWeights is a stand-in term-weighting model.
type fixedWeights struct{}

func (fixedWeights) TermWeights(text string) map[string]float64 {
	w := map[string]float64{}
	for i, r := range text {
		w[string(r)] = float64(i%3 + 1)
	}
	return w
}
func (fixedWeights) ID() string { return "fixed-1" }

func TestWeighterRecordedAndRequired(t *testing.T) {
	data := loadData(t)
	m, _, err := Train(context.Background(), data, Config{Dim: 4, MaxIter: 2, Init: "random"}, Options{Weighter: tokenWeights{}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, nil); err == nil {
		t.Error("loaded a weighter-trained model without its weighter")
	}
	if _, err := Load(path, fixedWeights{}); err == nil {
		t.Error("loaded with the wrong weighter")
	}
	if _, err := Load(path, tokenWeights{}); err != nil {
		t.Error(err)
	}
}

type tokenWeights struct{}

func (tokenWeights) TermWeights(text string) map[string]float64 {
	return map[string]float64{"car": 2, "visa": 1, "qatar": 0.5}
}
func (tokenWeights) ID() string { return "tokens-1" }

func TestTrainRejects(t *testing.T) {
	data := loadData(t)
	for _, tc := range []struct {
		name string
		data concept.Data
		cfg  Config
	}{
		{"bad init", data, Config{Dim: 4, Init: "zeros"}},
		{"too many dims", data, Config{Dim: 1 << 20}},
		{"no signal", concept.Data{Texts: data.Texts}, Config{Dim: 4}},
		// Far beyond these the loss overflows and gonum's line search
		// panics in its own goroutine.
		{"gamma out of range", data, Config{Dim: 4, Gamma: 1e308}},
		{"pair weight out of range", data, Config{Dim: 4, PairWeight: 1e200}},
		{"NaN gamma", data, Config{Dim: 4, Gamma: math.NaN()}},
		// These trained and then failed to save the config.
		{"-Inf pair weight", data, Config{Dim: 4, PairWeight: math.Inf(-1)}},
		{"NaN dev fraction", data, Config{Dim: 4, DevFrac: math.NaN()}},
	} {
		if _, _, err := Train(context.Background(), tc.data, tc.cfg, Options{}); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestTrainIndependentOfWorkers checks the reproducibility promise across
// machines: Workers is not saved with the model, so training with one
// goroutine and with several must give the same projection bit for bit
// (the parallel gradient sums in a fixed order).
func TestTrainIndependentOfWorkers(t *testing.T) {
	data := loadData(t)
	var first *Model
	for _, w := range []int{1, 3} {
		cfg := Config{Dim: 8, MaxIter: 10, Patience: 10, Block: 32, Seed: 2, DevFrac: 0.4, Workers: w}
		m, _, err := Train(context.Background(), data, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = m
		} else if !mat.Equal(first.A, m.A) || first.ID() != m.ID() {
			t.Errorf("%d workers train another projection than 1 worker", w)
		}
	}
}
