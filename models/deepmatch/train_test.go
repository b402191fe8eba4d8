package deepmatch

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/internal/modeltest"
)

func semevalSlice(t testing.TB) (train, dev []Query) {
	t.Helper()
	ds, err := dataset.Load("../../testdata/deepmatch/semeval-a")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := FromDataset(ds)
	if err != nil {
		t.Fatal(err)
	}
	return qs[:30], qs[30:]
}

func smallConfig(method string) Config {
	c := DefaultConfig(method)
	c.Resolutions, c.LDAIterations, c.PatchWords = []int{4, 8}, 10, 20
	c.Dim, c.Hidden, c.Epochs, c.MinDF = 4, 6, 3, 1
	return c
}

// TestTrainSaveLoad trains each method on a slice of SemEval data, and
// checks that the saved model scores exactly as the trained one.
func TestTrainSaveLoad(t *testing.T) {
	train, dev := semevalSlice(t)
	for _, method := range []string{MethodDeepMatch, MethodBilinear, MethodSiamese} {
		t.Run(method, func(t *testing.T) {
			var epochs int
			m, err := Train(context.Background(), train, dev, smallConfig(method), func(p Progress) {
				if p.Epoch > 0 {
					epochs++
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if epochs == 0 || len(m.Curve) != epochs || m.DevMAP <= 0 {
				t.Fatalf("%d epochs reported, curve %v, dev MAP %g", epochs, m.Curve, m.DevMAP)
			}
			path := filepath.Join(t.TempDir(), "m")
			if err := m.Save(path); err != nil {
				t.Fatal(err)
			}
			got, err := Load(path, method)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range dev[:3] {
				if a, b := m.ScoreQuery(q), got.ScoreQuery(q); !slices.Equal(a, b) {
					t.Fatalf("query %s: scores %v before saving, %v after", q.ID, a, b)
				}
			}
			if _, err := Load(path, "tweak"); err == nil {
				t.Fatal("loading as another method: no error")
			}
			// The vocabularies hold analyzers.Tokens terms: a model from
			// another version of that analyzer is refused.
			load := func(p string) (*Model, error) { return Load(p, method) }
			modeltest.Analyzer(t, m, analyzers.ID(), load, (*Model).Save)
			if err := PlotCurve(filepath.Join(t.TempDir(), "c.png"), method, m.Curve); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestLoadRejectsDamage(t *testing.T) {
	train, dev := semevalSlice(t)
	m, err := Train(context.Background(), train, dev, smallConfig(MethodBilinear), nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string][]byte{
		"truncated": raw[:len(raw)/2],
		"flipped":   append(append([]byte(nil), raw[:100]...), append([]byte{raw[100] ^ 1}, raw[101:]...)...),
		"empty":     nil,
	}
	for name, b := range tests {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(p, ""); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestTrainRejectsBadInput(t *testing.T) {
	train, dev := semevalSlice(t)
	bad := smallConfig(MethodDeepMatch)
	bad.Resolutions = nil
	noNeg := smallConfig(MethodBilinear)
	noNeg.NegRandom, noNeg.NegSameQuery = 0, 0
	tests := []struct {
		name  string
		train []Query
		cfg   Config
	}{
		{"no queries", nil, smallConfig(MethodBilinear)},
		{"unknown method", train, Config{Method: "lstm"}},
		{"no resolutions", train, bad},
		{"no negatives", train, noNeg},
		{"empty query", []Query{{ID: "q", Cands: []Cand{{ID: "d", Relevant: true}, {ID: "e"}}}}, smallConfig(MethodBilinear)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Train(context.Background(), tc.train, dev, tc.cfg, nil); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

// TestValidateRejectsNonFinite: NaN passes the range checks' < and <=, and
// a NaN margin trained every epoch and then failed to save its config
// ("json: unsupported value: NaN"); a NaN learning rate, l2 or initial
// scale failed with a NaN dev score that named no setting.
func TestValidateRejectsNonFinite(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name string
		set  func(*Config)
	}{
		{"learning rate NaN", func(c *Config) { c.LearningRate = nan }},
		{"learning rate +Inf", func(c *Config) { c.LearningRate = inf }},
		{"l2 NaN", func(c *Config) { c.L2 = nan }},
		{"l2 +Inf", func(c *Config) { c.L2 = inf }},
		{"margin NaN", func(c *Config) { c.Margin = nan }},
		{"margin +Inf", func(c *Config) { c.Margin = inf }},
		{"init NaN", func(c *Config) { c.Init = nan }},
		{"init -Inf", func(c *Config) { c.Init = -inf }},
	}
	for _, method := range []string{MethodDeepMatch, MethodBilinear, MethodSiamese} {
		if err := DefaultConfig(method).Validate(); err != nil {
			t.Fatalf("%s default config: %v", method, err)
		}
		for _, tc := range tests {
			c := DefaultConfig(method)
			tc.set(&c)
			if err := c.Validate(); err == nil {
				t.Errorf("%s, %s: accepted", method, tc.name)
			}
		}
	}
}

// TestTrainReportsDivergence: a learning rate so large that the weights
// overflow is an error that says so, not eval's "score is NaN".
func TestTrainReportsDivergence(t *testing.T) {
	train, dev := semevalSlice(t)
	c := smallConfig(MethodBilinear)
	c.LearningRate, c.Epochs = 1e300, 1
	_, err := Train(context.Background(), train, dev, c, nil)
	if err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Fatalf("got %v, want an error saying training diverged", err)
	}
}

func TestCandidateTokens(t *testing.T) {
	tests := []struct {
		text string
		meta map[string]any
		want []string
	}{
		{"thanks", nil, []string{"thank", "#len0"}},
		{"thanks", map[string]any{"by_question_author": true}, []string{"thank", "#len0", "#asker"}},
		{"one two three four five six seven", map[string]any{"by_question_author": false}, nil},
	}
	for _, tc := range tests {
		got := CandidateTokens(tc.text, tc.meta, true)
		if tc.want == nil {
			if slices.Contains(got, tokAsker) || !slices.Contains(got, "#len1") {
				t.Errorf("%q: %v", tc.text, got)
			}
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.text, got, tc.want)
		}
	}
	if got := CandidateTokens("thanks", map[string]any{"by_question_author": true}, false); len(got) != 1 {
		t.Errorf("meta off: %v", got)
	}
}

// TestLoadRejectsCraftedSizes saves models whose config promises a network
// far larger than the stored weights, or whose weights are not finite: Load
// must refuse them before allocating the network, not run out of memory or
// score NaN.
func TestLoadRejectsCraftedSizes(t *testing.T) {
	train, dev := semevalSlice(t)
	tests := []struct {
		method string
		damage func(m *Model)
	}{
		{MethodBilinear, func(m *Model) { m.Config.Dim = 1 << 40 }},
		{MethodSiamese, func(m *Model) { m.Config.Hidden = 1 << 40 }},
		{MethodSiamese, func(m *Model) { m.Config.Dim = 1 << 40 }},
		{MethodDeepMatch, func(m *Model) { m.Config.Rank = 1 << 40 }},
		{MethodDeepMatch, func(m *Model) { m.Config.Committee = 1 << 40 }},
		{MethodDeepMatch, func(m *Model) { m.Config.Neurons = []int{1 << 40} }},
		{MethodBilinear, func(m *Model) { m.net.params().blocks[0].w[0] = math.NaN() }},
		{MethodDeepMatch, func(m *Model) { m.net.params().blocks[0].w[0] = math.Inf(1) }},
		{MethodSiamese, func(m *Model) { m.VY.IDF[0] = math.NaN() }},
	}
	trained := map[string]*Model{}
	for i, tt := range tests {
		m := trained[tt.method]
		if m == nil {
			var err error
			if m, err = Train(context.Background(), train, dev, smallConfig(tt.method), nil); err != nil {
				t.Fatal(err)
			}
			trained[tt.method] = m
		}
		path := filepath.Join(t.TempDir(), "m")
		if err := m.Save(path); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path, tt.method)
		if err != nil {
			t.Fatal(err)
		}
		tt.damage(c)
		if err := c.Save(path); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path, tt.method); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("case %d (%s): err = %v, want an error naming the file", i, tt.method, err)
		}
	}
}

// TestTrainWithoutDevKeepsLastEpoch trains on fewer than ten queries with
// no dev set: holding out every tenth query leaves no dev query, so there
// is nothing to stop early on and every epoch must run, the last kept
// (not the first, which a constant dev MAP of 0 would keep).
func TestTrainWithoutDevKeepsLastEpoch(t *testing.T) {
	train, _ := semevalSlice(t)
	cfg := smallConfig(MethodBilinear)
	cfg.Epochs, cfg.Patience = 4, 1
	m, err := Train(context.Background(), train[:8], nil, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Curve) != cfg.Epochs || !m.Curve[len(m.Curve)-1].Best {
		t.Errorf("curve %+v: want %d epochs, the last kept", m.Curve, cfg.Epochs)
	}
}

// TestSampleTriplesOwnPoolOnly: when every document of the pool belongs
// to the query itself (the other queries have no candidates), there is no
// random negative to draw: sampling must neither redraw forever (a hang
// here; go test's timeout reports it) nor take the query's own documents,
// which may be relevant, as negatives.
func TestSampleTriplesOwnPoolOnly(t *testing.T) {
	enc := []encoded{{cands: make([]Input, 2), pos: []int{0}, neg: []int{1}}, {}, {}}
	cfg := smallConfig(MethodBilinear)
	cfg.NegSameQuery, cfg.NegRandom = 1, 3
	ts := sampleTriples(enc, 2, []int{0, 0}, cfg, rand.New(rand.NewPCG(1, 2)))
	if len(ts) != 1 || ts[0].random || ts[0].neg != 1 {
		t.Errorf("triples %+v, want only the same-query negative", ts)
	}
}
