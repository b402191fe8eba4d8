package dse

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
	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/internal/modeltest"
)

func tinyModel(sizes []int, seed uint64) *Model {
	rng := rand.New(rand.NewPCG(seed, 9))
	m := &Model{}
	for i := 0; i+1 < len(sizes); i++ {
		w := mat.NewDense(sizes[i], sizes[i+1], nil)
		for k := range w.RawMatrix().Data {
			w.RawMatrix().Data[k] = rng.NormFloat64()
		}
		c := make([]float64, sizes[i+1])
		for k := range c {
			c[k] = 0.3 * rng.NormFloat64()
		}
		m.layers = append(m.layers, layer{W: w, B: make([]float64, sizes[i]), C: c})
	}
	return m
}

// TestFineTuneGradient checks backpropagation through the binary layers
// and the linear top against central differences of the margin loss.
func TestFineTuneGradient(t *testing.T) {
	sizes := []int{6, 4, 4, 6, 3}
	m := tinyModel(sizes, 1)
	rng := rand.New(rand.NewPCG(2, 3))
	x := mat.NewDense(5, 6, nil)
	for k := range x.RawMatrix().Data {
		if rng.IntN(2) == 1 {
			x.RawMatrix().Data[k] = 1
		}
	}
	batch := []triple{{0, 1, 2}, {0, 3, 4}, {1, 2, 3}, {4, 0, 1}}
	loss := func() float64 { return m.tripleGrad(x, batch, m.zeroGrads()) }
	// Keep only triples whose hinge is active and away from its kink, so
	// the loss is differentiable at this point.
	var active []triple
	for _, tr := range batch {
		f := m.tripleGrad(x, []triple{tr}, m.zeroGrads())
		if f > 0.05 {
			active = append(active, tr)
		}
	}
	if len(active) == 0 {
		t.Fatal("no active triple; change the seed")
	}
	batch = active
	g := m.zeroGrads()
	m.tripleGrad(x, batch, g)
	const h = 1e-6
	checked := 0
	for i, l := range m.layers {
		params := [][]float64{l.W.RawMatrix().Data, l.C}
		analytic := [][]float64{g.W[i].RawMatrix().Data, g.C[i]}
		for p := range params {
			for k := range params[p] {
				orig := params[p][k]
				params[p][k] = orig + h
				fp := loss()
				params[p][k] = orig - h
				fm := loss()
				params[p][k] = orig
				num := (fp - fm) / (2 * h)
				if math.Abs(num-analytic[p][k]) > 1e-5*math.Max(1, math.Abs(num)) {
					t.Errorf("layer %d param %d/%d: analytic %g numeric %g", i, p, k, analytic[p][k], num)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
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

// TestRBMLowersReconstructionError pretrains binary and Gaussian RBMs on
// SemEval word occurrences.
func TestRBMLowersReconstructionError(t *testing.T) {
	data := loadData(t)
	cfg := Config{D: 60}.withDefaults()
	space, err := concept.BuildSpace(data.Texts, concept.SpaceConfig{MaxTerms: cfg.D})
	if err != nil {
		t.Fatal(err)
	}
	m := &Model{Config: cfg, Space: space}
	x := m.inputs(data.Texts)
	for _, tc := range []struct {
		name     string
		gaussian bool
		lr       float64
	}{
		{"binary", false, 0.1},
		{"gaussian", true, 0.01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRBM(space.Dim(), 20, tc.gaussian, tc.lr, cfg, rand.New(rand.NewPCG(4, 5)))
			before := r.reconError(x)
			if _, err := r.train(context.Background(), x, 15, 16, "rbm", nil); err != nil {
				t.Fatal(err)
			}
			after := r.reconError(x)
			if !(after < 0.8*before) {
				t.Errorf("reconstruction error %v → %v", before, after)
			}
		})
	}
}

func TestTrainLowersLossSaveLoad(t *testing.T) {
	data := loadData(t)
	cfg := Config{D: 40, C: 8, PretrainEpochs: 2, FineTuneEpochs: 8, Patience: 8, FineTuneLR: 0.01, Batch: 32, Mix: -1, Seed: 3}
	m, curve, err := Train(context.Background(), data, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ft []concept.Iteration
	for _, it := range curve {
		if it.Phase == "finetune" {
			ft = append(ft, it)
		}
	}
	if len(ft) < 2 || !(ft[len(ft)-1].Loss < ft[0].Loss) {
		t.Errorf("fine-tuning loss did not fall: %+v", ft)
	}
	if m.Config.Mix < 0 {
		t.Errorf("mix not chosen: %v", m.Config.Mix)
	}
	if got := len(m.Embed(data.Lists[0].Query)); got != 8 {
		t.Errorf("embedding has %d dims", got)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "dse.model")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.layers {
		if !reflect.DeepEqual(got.layers[i].W.RawMatrix().Data, m.layers[i].W.RawMatrix().Data) {
			t.Errorf("layer %d changed in the round trip", i)
		}
	}
	q := data.Lists[1].Query
	if !reflect.DeepEqual(got.Embed(q), m.Embed(q)) || got.ID() != m.ID() || got.Config.Mix != m.Config.Mix {
		t.Error("loaded model differs")
	}
	// The vocabulary holds analyzers.Tokens terms: a model from another
	// version of that analyzer is refused.
	modeltest.Analyzer(t, m, analyzers.ID(), Load, (*Model).Save)
	raw, _ := os.ReadFile(path)
	raw[100] ^= 0x10
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, raw, 0o644)
	if _, err := Load(bad); err == nil {
		t.Error("loaded a corrupted model")
	}
	wrong := m.Clone()
	wrong.Config.Hidden = append(wrong.Config.Hidden, 3)
	if err := wrong.Save(bad); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("layers disagreeing with the config: err = %v, want an error naming %s", err, bad)
	}

	// A second model with another C reuses the pretrained lower layers.
	cfg2 := cfg
	cfg2.C = 4
	m2, _, err := Pretrain(context.Background(), data, cfg2, Options{Base: m})
	if err != nil {
		t.Fatal(err)
	}
	if m2.layers[0].W != m.layers[0].W || m2.layers[3].W == m.layers[3].W {
		t.Error("base layers not reused, or top layer shared")
	}
}

func TestTrainRejects(t *testing.T) {
	data := loadData(t)
	for _, tc := range []struct {
		name string
		data concept.Data
		cfg  Config
	}{
		{"bad input", data, Config{D: 20, Input: "tfidf"}},
		{"vocabulary too small", data, Config{D: 100000}},
		{"no signal", concept.Data{Texts: data.Texts}, Config{D: 20, PretrainEpochs: 1}},
		// NaN and ±Inf pass withDefaults; a NaN or infinite mix trained
		// to the end and then failed to save its config.
		{"mix NaN", data, Config{D: 20, PretrainEpochs: 1, Mix: math.NaN()}},
		{"mix +Inf", data, Config{D: 20, PretrainEpochs: 1, Mix: math.Inf(1)}},
		{"dev_frac NaN", data, Config{D: 20, PretrainEpochs: 1, DevFrac: math.NaN()}},
		{"finetune_lr +Inf", data, Config{D: 20, PretrainEpochs: 1, FineTuneLR: math.Inf(1)}},
		{"gauss_lr NaN", data, Config{D: 20, PretrainEpochs: 1, GaussLR: math.NaN()}},
	} {
		if _, _, err := Train(context.Background(), tc.data, tc.cfg, Options{}); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestPretrainRejectsMismatchedBase: a base model's vocabulary is the
// network's input layer, so a base fitted with another D must be refused
// with an error, not a dimension-mismatch panic in the first RBM.
func TestPretrainRejectsMismatchedBase(t *testing.T) {
	data := loadData(t)
	base, _, err := Pretrain(context.Background(), concept.Data{Texts: data.Texts}, Config{D: 20, Hidden: []int{6}, C: 3, PretrainEpochs: 1}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []int{10, 30} {
		cfg := Config{D: d, Hidden: []int{6}, C: 3, PretrainEpochs: 1}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("D=%d with a D=20 base: panic %v", d, r)
				}
			}()
			if _, _, err := Pretrain(context.Background(), concept.Data{Texts: data.Texts}, cfg, Options{Base: base}); err == nil || !strings.Contains(err.Error(), "D=") {
				t.Errorf("D=%d with a D=20 base: err = %v, want an error naming D", d, err)
			}
		}()
	}
}

// reconError returns the mean squared reconstruction error per example
// of the data through one deterministic up–down pass.
func (r *rbm) reconError(data *mat.Dense) float64 {
	n, _ := data.Dims()
	v1 := r.down(r.l.up(data, !r.gaussian))
	var s float64
	var d mat.Dense
	d.Sub(data, v1)
	for _, x := range d.RawMatrix().Data {
		s += x * x
	}
	return s / float64(n)
}
