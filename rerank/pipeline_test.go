package rerank

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

// badStage misbehaves as its mode says.
type badStage struct{ mode string }

func (badStage) Name() string { return "bad" }
func (b badStage) Score(_ context.Context, _ Query, cs []Candidate) ([]float64, error) {
	out := make([]float64, len(cs))
	switch b.mode {
	case "short":
		return out[1:], nil
	case "nan":
		out[1] = math.NaN()
	case "inf":
		out[0] = math.Inf(-1)
	case "error":
		return nil, errors.New("backend unavailable")
	case "panic":
		var m map[string]int
		m["x"]++ // a nil map: the user's bug
	}
	return out, nil
}

// TestRerankRefusesBadStages: a stage that returns the wrong number of
// scores, a score that is not finite, an error or a panic fails the
// rerank with an error naming the stage, never a panic.
func TestRerankRefusesBadStages(t *testing.T) {
	cands := []Candidate{{ID: "a", Rank: 1}, {ID: "b", Rank: 2}, {ID: "c", Rank: 3}}
	for _, tc := range []struct{ mode, want string }{
		{"short", "stage bad returned 2 scores for 3 candidates"},
		{"nan", `stage bad gave candidate "b" a non-finite score`},
		{"inf", `stage bad gave candidate "a" a non-finite score`},
		{"error", "stage bad: backend unavailable"},
		{"panic", "stage bad panicked: assignment to entry in nil map"},
		{"", ""},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			p := &Pipeline{Stages: []Stage{badStage{tc.mode}}, Fusion: &Linear{Weights: map[string]float64{"bad": 1}}}
			_, err := p.Rerank(context.Background(), Query{Text: "q"}, cands)
			errMatches(t, err, tc.want)
		})
	}
	p := &Pipeline{Stages: []Stage{badStage{"panic"}}}
	_, err := p.Rerank(context.Background(), Query{Text: "q"}, cands)
	var sp *StagePanic
	if !errors.As(err, &sp) || sp.Stage != "bad" || !strings.Contains(string(sp.Stack), "badStage.Score") {
		t.Errorf("err = %v (%T), want a *StagePanic for bad with the stage's stack", err, err)
	}
}
