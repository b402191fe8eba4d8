package rerank

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semrank/semrank/dataset"
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
	cands := []Candidate{{Doc: dataset.Doc{ID: "a"}, Rank: 1}, {Doc: dataset.Doc{ID: "b"}, Rank: 2}, {Doc: dataset.Doc{ID: "c"}, Rank: 3}}
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

// lenStage scores a candidate by its text's length.
type lenStage struct{}

func (lenStage) Name() string { return "len" }
func (lenStage) Score(_ context.Context, _ Query, cs []Candidate) ([]float64, error) {
	out := make([]float64, len(cs))
	for i, c := range cs {
		out[i] = float64(len(c.Text))
	}
	return out, nil
}

// TestRerankUnsetRanks: candidates given without Rank (built by hand, in
// first-stage order) rerank as if each had its place as its rank; they all
// counted as rank 1, so the fusion silently lost the first-stage rank.
func TestRerankUnsetRanks(t *testing.T) {
	texts := []string{"a", "bbbbbb", "cc", "ddddddddd", "e"}
	for _, fusion := range []struct {
		name string
		f    Fusion
	}{
		{"linear", &Linear{Weights: map[string]float64{FeatureFirstRank: 2, "len": 1}}},
		{"rrf", &RRF{}},
	} {
		for _, tc := range []struct {
			name  string
			ranks []int
		}{
			{"none set", []int{0, 0, 0, 0, 0}},
			{"some set", []int{1, 0, 3, 0, 5}},
			{"window cuts unset", []int{0, 0, 0, 0, 0}},
		} {
			t.Run(fusion.name+"/"+tc.name, func(t *testing.T) {
				p := &Pipeline{Stages: []Stage{lenStage{}}, Fusion: fusion.f}
				if tc.name == "window cuts unset" {
					p.Window = 3
				}
				var given, want []Candidate
				for i, s := range texts {
					given = append(given, Candidate{Doc: dataset.Doc{ID: s[:1], Text: s}, Rank: tc.ranks[i]})
					want = append(want, Candidate{Doc: dataset.Doc{ID: s[:1], Text: s}, Rank: i + 1})
				}
				got, err := p.Rerank(context.Background(), Query{Text: "q"}, given)
				if err != nil {
					t.Fatal(err)
				}
				exp, err := p.Rerank(context.Background(), Query{Text: "q"}, want)
				if err != nil {
					t.Fatal(err)
				}
				for i := range exp {
					if got[i].ID != exp[i].ID || got[i].Score != exp[i].Score || got[i].Rank != exp[i].Rank {
						t.Errorf("place %d: %s score %g rank %d, want %s score %g rank %d", i, got[i].ID, got[i].Score, got[i].Rank, exp[i].ID, exp[i].Score, exp[i].Rank)
					}
				}
				if given[1].Rank != tc.ranks[1] {
					t.Errorf("Rerank wrote the caller's candidates: rank %d", given[1].Rank)
				}
			})
		}
	}
}

// namedError is a stage called name failing with its name.
type namedError struct{ name string }

func (s namedError) Name() string { return s.name }
func (s namedError) Score(context.Context, Query, []Candidate) ([]float64, error) {
	return nil, errors.New(s.name + " failed")
}

// TestStageOrder: a built pipeline hands its stages out costliest first by
// their recent times, ties in pipeline order; one built by hand keeps
// pipeline order; and whatever the order, the error of several failing
// stages is the first's in pipeline order.
func TestStageOrder(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("on one processor stages run in pipeline order")
	}
	p := &Pipeline{Stages: []Stage{namedError{"a"}, namedError{"b"}, namedError{"c"}, namedError{"d"}}}
	if got := p.stageOrder(); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("by hand: order %v", got)
	}
	p.costs = make([]atomic.Int64, len(p.Stages))
	for range 50 {
		p.observeCost(1, time.Millisecond)
		p.observeCost(3, 5*time.Millisecond)
	}
	if got := p.stageOrder(); !slices.Equal(got, []int{3, 1, 0, 2}) {
		t.Fatalf("order %v, want [3 1 0 2]", got)
	}
	cands := []Candidate{{Doc: dataset.Doc{ID: "a"}, Rank: 1}}
	if _, err := p.ScoreStages(context.Background(), Query{Text: "q"}, cands); err == nil || !strings.Contains(err.Error(), "a failed") {
		t.Fatalf("err = %v, want the first stage's in pipeline order", err)
	}
}
