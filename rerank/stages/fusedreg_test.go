package stages

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// givenScores is a stage that scores the candidates by their IDs.
type givenScores map[string]float64

func (givenScores) Name() string { return "given" }

func (s givenScores) Score(_ context.Context, _ rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	out := make([]float64, len(cands))
	for i, c := range cands {
		out[i] = s[c.ID]
	}
	return out, nil
}

// TestSmoothFusedScores checks the regularize stage as a pipeline's step
// after the fusion on a window solved by hand. d1 and d2 hold the same
// words, and d3 and d4 the same others: the graph is two pairs joined by
// edges of weight 1 (cosine 1), and on a pair S = [[0 1] [1 0]], so
// f = (1 − α)(I − αS)⁻¹y gives each candidate (yᵢ + α·yⱼ)/(1 + α), j its
// pair, y the scores smoothed standardised over the window.
func TestSmoothFusedScores(t *testing.T) {
	cands := []rerank.Candidate{
		{Doc: dataset.Doc{ID: "d1", Text: "a b"}, Score: 1, Rank: 1},
		{Doc: dataset.Doc{ID: "d2", Text: "b a"}, Score: 4, Rank: 2},
		{Doc: dataset.Doc{ID: "d3", Text: "c d"}, Score: 3, Rank: 3},
		{Doc: dataset.Doc{ID: "d4", Text: "d c"}, Score: 2, Rank: 4},
	}
	given := givenScores{"d1": 3, "d2": 1, "d3": 0, "d4": 2}
	pair := map[string]string{"d1": "d2", "d2": "d1", "d3": "d4", "d4": "d3"}
	// z-scores of a window's scores, by ID.
	zOf := func(by func(rerank.Candidate) float64) map[string]float64 {
		v := make([]float64, len(cands))
		for i, c := range cands {
			v[i] = by(c)
		}
		rerank.ZNormalize(v)
		out := map[string]float64{}
		for i, c := range cands {
			out[c.ID] = v[i]
		}
		return out
	}
	fusedZ := zOf(func(c rerank.Candidate) float64 { return given[c.ID] })
	firstZ := zOf(func(c rerank.Candidate) float64 { return c.Score })
	tests := []struct {
		name   string
		fusion rerank.Fusion
		alpha  float64
		y      map[string]float64 // the scores smoothed, standardised
	}{
		{"linear fusion", &rerank.Linear{Weights: map[string]float64{"given": 1}}, 0.5, fusedZ},
		{"linear fusion, alpha 0.3", &rerank.Linear{Weights: map[string]float64{"given": 1}}, 0.3, fusedZ},
		// The fused scores standardised: the first stage's order
		// turned into the given stage's, unsmoothed.
		{"alpha 0", &rerank.Linear{Weights: map[string]float64{"given": 1}}, 0, fusedZ},
		// A fusion's scale does not matter: they are standardised.
		{"linear fusion, weight 7", &rerank.Linear{Weights: map[string]float64{"given": 7}}, 0.5, fusedZ},
		// Without a fusion, the first stage's scores are smoothed.
		{"no fusion", nil, 0.5, firstZ},
	}
	stats := mapStats{n: 10, df: map[string]uint64{"a": 2, "b": 5, "c": 1, "d": 3}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &rerank.Pipeline{
				Stages: []rerank.Stage{given},
				Fusion: tc.fusion,
				Smooth: &Regularize{Stats: stats, Analyze: strings.Fields, K: 10, Alpha: tc.alpha},
			}
			got, err := p.Rerank(context.Background(), rerank.Query{Text: "a"}, cands)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(cands) {
				t.Fatalf("%d hits, want %d", len(got), len(cands))
			}
			for k, h := range got {
				want := (tc.y[h.ID] + tc.alpha*tc.y[pair[h.ID]]) / (1 + tc.alpha)
				if math.Abs(h.Score-want) > 1e-9 {
					t.Errorf("%s: score %v, want %v", h.ID, h.Score, want)
				}
				if k > 0 && h.Score >= got[k-1].Score {
					t.Errorf("%s: score %v not below the hit before's %v", h.ID, h.Score, got[k-1].Score)
				}
				// The stages' raw scores are kept, not the step's.
				if len(h.StageScores) != 1 || h.StageScores[0] != given[h.ID] {
					t.Errorf("%s: stage scores %v, want [%v]", h.ID, h.StageScores, given[h.ID])
				}
			}
		})
	}
}

// TestSmoothFusedScoresErrors: the step's failure is the search's, named.
func TestSmoothFusedScoresErrors(t *testing.T) {
	cands := []rerank.Candidate{{Doc: dataset.Doc{ID: "d1", Text: "a"}, Score: 1}}
	p := &rerank.Pipeline{
		Stages: []rerank.Stage{givenScores{}},
		Smooth: &Regularize{Stats: failingStats{}, Analyze: strings.Fields, K: 10, Alpha: 0.5, name: rerank.SmoothName},
	}
	if _, err := p.Rerank(context.Background(), rerank.Query{Text: "a"}, cands); err == nil || !strings.Contains(err.Error(), rerank.SmoothName) {
		t.Errorf("err %v, want one naming %s", err, rerank.SmoothName)
	}
}

// failingStats are collection statistics that cannot be read.
type failingStats struct{}

func (failingStats) DocCount() (uint64, error)      { return 0, errStats }
func (failingStats) DocFreq(string) (uint64, error) { return 0, errStats }

var errStats = errors.New("statistics unreadable")

// TestFusionRegularizeBuild: a pipeline file's fusion.regularize builds
// the regularize stage as the Smooth step, with the stage's defaults and
// checks; without it there is no step.
func TestFusionRegularizeBuild(t *testing.T) {
	idx, err := index.Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	tests := []struct {
		name, doc string
		k         int     // 0: no step
		alpha     float64 // the step's
		wantErr   string  // substring; "" for success
	}{
		{"absent", "stages: [{type: bm25}]\n", 0, 0, ""},
		{"null", "stages: [{type: bm25}]\nfusion: {regularize: null}\n", 0, 0, ""},
		{"defaults", "stages: [{type: bm25}]\nfusion: {regularize: {}}\n", 10, 0.5, ""},
		{"options", "stages: [{type: bm25}]\nfusion: {method: rrf, regularize: {k: 5, alpha: 0.7}}\n", 5, 0.7, ""},
		{"first stage alone", "fusion: {method: none, regularize: {alpha: 0.3}}\n", 10, 0.3, ""},
		{"alpha 1", "stages: [{type: bm25}]\nfusion: {regularize: {alpha: 1}}\n", 0, 0, "option alpha 1"},
		{"k 0", "stages: [{type: bm25}]\nfusion: {regularize: {k: 0}}\n", 0, 0, "option k 0"},
		{"unknown option", "stages: [{type: bm25}]\nfusion: {regularize: {mu: 1}}\n", 0, 0, "unknown option mu"},
		{"not a map", "stages: [{type: bm25}]\nfusion: {regularize: 0.5}\n", 0, 0, "cannot unmarshal"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := rerank.ParseConfig([]byte(tc.doc))
			var p *rerank.Pipeline
			if err == nil {
				p, err = c.Build(rerank.EnvFor(idx))
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				if c != nil && !strings.Contains(err.Error(), rerank.SmoothName) {
					t.Errorf("err %v does not name %s", err, rerank.SmoothName)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.k == 0 {
				if p.Smooth != nil {
					t.Fatalf("a step %v, want none", p.Smooth)
				}
				return
			}
			r, ok := p.Smooth.(*Regularize)
			if !ok || r.K != tc.k || r.Alpha != tc.alpha || r.Name() != rerank.SmoothName {
				t.Fatalf("step %#v, want regularize k %d alpha %v named %s", p.Smooth, tc.k, tc.alpha, rerank.SmoothName)
			}
		})
	}
}
