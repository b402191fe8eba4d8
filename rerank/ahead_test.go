package rerank

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blevesearch/bleve/v2/search"
)

// gateStage scores each candidate by its rank, holding its first call
// until released: entered closes when that call starts.
type gateStage struct {
	entered, release chan struct{}
	enter            sync.Once
	calls            atomic.Int32
	sawText          atomic.Bool
	err              error
}

func newGateStage(err error) *gateStage {
	return &gateStage{entered: make(chan struct{}), release: make(chan struct{}), err: err}
}

func (g *gateStage) Name() string { return "gate" }

func (g *gateStage) Score(_ context.Context, _ Query, cs []Candidate) ([]float64, error) {
	g.calls.Add(1)
	g.enter.Do(func() { close(g.entered) })
	<-g.release
	out := make([]float64, len(cs))
	for i, c := range cs {
		out[i] = float64(c.Rank)
		if c.Text != "" {
			g.sawText.Store(true)
		}
	}
	return out, g.err
}

// textLen scores each candidate by its text's length.
type textLen struct{}

func (textLen) Name() string { return "textlen" }
func (textLen) Score(_ context.Context, _ Query, cs []Candidate) ([]float64, error) {
	out := make([]float64, len(cs))
	for i, c := range cs {
		out[i] = float64(len(c.Text))
	}
	return out, nil
}

// TestScoreAhead: a stage scored ahead, on the window's candidates
// before their documents load, is scored once, and ScoreStages takes its
// scores and its error; scores for other candidates than those it was
// started on are not taken; on one processor, or where no document
// loads, nothing starts ahead.
func TestScoreAhead(t *testing.T) {
	procs := runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	window := search.DocumentMatchCollection{{ID: "a", Score: 3}, {ID: "b", Score: 2}, {ID: "c", Score: 1}}
	loaded := (&Pipeline{}).candidates(window)
	for i := range loaded {
		loaded[i].Text = "text of " + loaded[i].ID
	}
	fail := errors.New("gate failed")
	loads := []bool{false, true, false} // the documents the search loads meanwhile
	for _, tc := range []struct {
		name      string
		err       error
		scoreWith []Candidate // what ScoreStages is given
		calls     int32
	}{
		{"taken", nil, loaded, 1},
		{"its error", fail, loaded, 1},
		{"other candidates", nil, loaded[:2], 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := newGateStage(tc.err)
			p := &Pipeline{Stages: []Stage{gate, textLen{}}}
			ctx := withWindowMemo(context.Background())
			p.scoreAhead(ctx, Query{Text: "q"}, window, nil, loads, []bool{true, false})
			<-gate.entered // claimed ahead, on the candidates without text
			close(gate.release)
			scores, err := p.ScoreStages(ctx, Query{Text: "q"}, tc.scoreWith)
			if got := gate.calls.Load(); got != tc.calls {
				t.Errorf("gate scored %d times, want %d", got, tc.calls)
			}
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("error %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range tc.scoreWith {
				if scores[0][i] != float64(c.Rank) || scores[1][i] != float64(len(c.Text)) {
					t.Fatalf("candidate %s scored %v, %v", c.ID, scores[0][i], scores[1][i])
				}
			}
		})
	}
	for _, tc := range []struct {
		name  string
		procs int
		loads []bool
	}{
		{"one processor", 1, loads},
		{"no document loads", 2, make([]bool, len(window))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			was := runtime.GOMAXPROCS(tc.procs)
			defer runtime.GOMAXPROCS(was)
			gate := newGateStage(nil)
			close(gate.release)
			p := &Pipeline{Stages: []Stage{gate, textLen{}}}
			ctx := withWindowMemo(context.Background())
			p.scoreAhead(ctx, Query{Text: "q"}, window, nil, tc.loads, []bool{true, false})
			if _, err := p.ScoreStages(ctx, Query{Text: "q"}, loaded); err != nil {
				t.Fatal(err)
			}
			if gate.calls.Load() != 1 || !gate.sawText.Load() {
				t.Errorf("gate scored %d times, saw text %v: want once, by ScoreStages, with the documents", gate.calls.Load(), gate.sawText.Load())
			}
		})
	}
}
