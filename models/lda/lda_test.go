package lda

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/models"
)

// planted returns a corpus drawn from topics with disjoint supports: topic
// k owns x words [k*w, (k+1)*w) and y words [k*w, (k+1)*w), uniformly. Each
// document mixes two topics.
func planted(topics, w, docs int, seed uint64) Corpus {
	rng := rand.New(rand.NewPCG(seed, 7))
	c := Corpus{VX: topics * w, VY: topics * w}
	for range docs {
		a, b := rng.IntN(topics), rng.IntN(topics)
		var d Doc
		for i := range 24 {
			k := a
			if i%3 == 2 {
				k = b
			}
			d.X = append(d.X, k*w+rng.IntN(w))
			d.Y = append(d.Y, k*w+rng.IntN(w))
		}
		c.Docs = append(c.Docs, d)
	}
	return c
}

func TestFitRecoversPlantedTopics(t *testing.T) {
	const topics, w = 5, 8
	c := planted(topics, w, 300, 1)
	m, err := Fit(context.Background(), c, Config{Topics: topics, Iterations: 150, Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Every planted topic must be one fitted topic: its w top words on
	// each side are exactly the planted words, so cross-side co-occurrence
	// is captured too.
	found := map[int]int{}
	for k := range topics {
		tx, ty := m.TopWords(k, X, w), m.TopWords(k, Y, w)
		slices.Sort(tx)
		slices.Sort(ty)
		planted := tx[0] / w
		for i := range w {
			if tx[i] != planted*w+i || ty[i] != planted*w+i {
				t.Fatalf("topic %d: top words x=%v y=%v are not one planted topic", k, tx, ty)
			}
		}
		if prev, dup := found[planted]; dup {
			t.Fatalf("topics %d and %d both recover planted topic %d", prev, k, planted)
		}
		found[planted] = k
		var mass float64
		for _, v := range tx {
			mass += m.PhiX[k][v]
		}
		for _, v := range ty {
			mass += m.PhiY[k][v]
		}
		if mass < 0.95 {
			t.Errorf("topic %d: planted words hold %.3f of its mass, want > 0.95", k, mass)
		}
	}
	if n := len(m.LogLik); n < 2 || m.LogLik[n-1] < m.LogLik[0] {
		t.Errorf("log-likelihood did not improve: %v", m.LogLik)
	}
}

func TestFitResolutions(t *testing.T) {
	c := planted(4, 5, 60, 2)
	ms, err := FitResolutions(context.Background(), c, Config{Iterations: 20, Seed: 1}, []int{2, 4, 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{2, 4, 8} {
		m := ms[i]
		if m.Topics != want || len(m.PhiX) != want || len(m.PhiY) != want {
			t.Fatalf("resolution %d: %d topics, want %d", i, m.Topics, want)
		}
		for k := range want {
			var s float64
			for _, p := range m.PhiX[k] {
				s += p
			}
			for _, p := range m.PhiY[k] {
				s += p
			}
			if s < 0.999 || s > 1.001 {
				t.Errorf("resolution %d topic %d: probabilities sum to %g", i, k, s)
			}
		}
	}
}

func TestFitRejectsBadInput(t *testing.T) {
	good := planted(2, 3, 5, 1)
	tests := []struct {
		name string
		c    Corpus
		cfg  Config
	}{
		{"no topics", good, Config{Topics: 0, Iterations: 1}},
		{"x id out of range", Corpus{VX: 2, VY: 2, Docs: []Doc{{X: []int{2}}}}, Config{Topics: 2, Iterations: 1}},
		{"negative y id", Corpus{VX: 2, VY: 2, Docs: []Doc{{Y: []int{-1}}}}, Config{Topics: 2, Iterations: 1}},
		{"empty corpus", Corpus{VX: 2, VY: 2}, Config{Topics: 2, Iterations: 1}},
		{"zero vocabulary", Corpus{Docs: []Doc{{}}}, Config{Topics: 2, Iterations: 1}},
		{"negative beta", good, Config{Topics: 2, Iterations: 1, Beta: -1}},
		{"NaN alpha", good, Config{Topics: 2, Iterations: 1, Alpha: math.NaN()}},
		{"NaN beta", good, Config{Topics: 2, Iterations: 1, Beta: math.NaN()}},
		{"infinite beta", good, Config{Topics: 2, Iterations: 1, Beta: math.Inf(1)}},
		{"negative iterations", good, Config{Topics: 2, Iterations: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Fit(context.Background(), tc.c, tc.cfg, nil); err == nil {
				t.Fatal("no error")
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Fit(ctx, good, Config{Topics: 2, Iterations: 5}, nil); err == nil {
		t.Fatal("cancelled context: no error")
	}
	if _, err := FitResolutions(context.Background(), good, Config{}, nil, nil); err == nil {
		t.Fatal("no resolutions: no error")
	}
}

func TestBundleRoundTrip(t *testing.T) {
	m, err := Fit(context.Background(), planted(3, 4, 30, 5), Config{Topics: 3, Iterations: 10, Seed: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := models.New("lda", 1)
	m.AddTo(b, "r0_")
	got, err := FromBundle(b, "r0_")
	if err != nil {
		t.Fatal(err)
	}
	for k := range m.Topics {
		if !slices.Equal(got.PhiX[k], m.PhiX[k]) || !slices.Equal(got.PhiY[k], m.PhiY[k]) {
			t.Fatalf("topic %d differs after round trip", k)
		}
	}
	if _, err := FromBundle(b, "r1_"); err == nil {
		t.Fatal("missing prefix: no error")
	}
}

// TestFromBundleRejectsBadShapes: tensors whose shapes no fitted model
// has are refused, in particular a topic count over an empty vocabulary,
// which the file's size would not bound.
func TestFromBundleRejectsBadShapes(t *testing.T) {
	tests := []struct {
		name   string
		kx, vx int
		ky, vy int
	}{
		{"no topics", 0, 3, 0, 3},
		{"topic counts differ", 2, 3, 3, 3},
		{"no x words", 1 << 20, 0, 1 << 20, 0},
		{"no x words, some y words", 2, 0, 2, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := models.New("lda", 1)
			b.AddTensor("phi_x", []int{tc.kx, tc.vx}, make([]float64, tc.kx*tc.vx))
			b.AddTensor("phi_y", []int{tc.ky, tc.vy}, make([]float64, tc.ky*tc.vy))
			if m, err := FromBundle(b, ""); err == nil {
				t.Errorf("model with %d topics, VX %d, VY %d: no error", m.Topics, m.VX, m.VY)
			}
		})
	}
}

// TestFromBundleRejectsBadValues: topic–word probabilities that are NaN,
// infinite, negative or above 1 are refused, naming the tensor.
func TestFromBundleRejectsBadValues(t *testing.T) {
	m, err := Fit(context.Background(), planted(3, 4, 30, 5), Config{Topics: 3, Iterations: 10, Seed: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"phi_x", "phi_y"} {
		for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -0.5, 2} {
			b := models.New("lda", 1)
			m.AddTo(b, "r0_")
			phi, err := b.Tensor("r0_"+side, 2)
			if err != nil {
				t.Fatal(err)
			}
			data := slices.Clone(phi.Data)
			data[len(data)-1] = v
			b.AddTensor("r0_"+side, phi.Shape, data)
			if _, err := FromBundle(b, "r0_"); err == nil || !strings.Contains(err.Error(), side) {
				t.Errorf("%s value %v: err = %v, want an error naming %s", side, v, err, side)
			}
		}
	}
}
