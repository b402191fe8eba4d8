package rerank

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// preparing is a stage whose query work (the query's length) is done
// once a window, by PrepareQuery when the search calls it first; panics
// makes PrepareQuery panic instead.
type preparing struct {
	prepared, computed atomic.Int32
	panics             bool
}

func (*preparing) Name() string { return "preparing" }

func (s *preparing) query(ctx context.Context, q Query, by *atomic.Int32) int {
	v, _ := WindowMemoOf(ctx).Do(s, func() (any, error) {
		by.Add(1)
		return len(q.Text), nil
	})
	return v.(int)
}

func (s *preparing) PrepareQuery(ctx context.Context, q Query) {
	if s.panics {
		panic("prepare")
	}
	s.query(ctx, q, &s.prepared)
}

func (s *preparing) Score(ctx context.Context, q Query, cands []Candidate) ([]float64, error) {
	n := s.query(ctx, q, &s.computed)
	out := make([]float64, len(cands))
	for i := range out {
		out[i] = float64(n)
	}
	return out, nil
}

// TestPrepareQueries: the stages' query work started beside the search
// is done once and found by Score, whichever goroutine got to it first;
// a PrepareQuery that panics does not crash the search's process.
func TestPrepareQueries(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("on one processor queries are not prepared ahead")
	}
	cands := []Candidate{{Doc: dataset.Doc{ID: "a"}, Rank: 1}, {Doc: dataset.Doc{ID: "b"}, Rank: 2}}
	for _, tc := range []struct {
		name   string
		panics bool
	}{{"prepared", false}, {"panicking", true}} {
		t.Run(tc.name, func(t *testing.T) {
			st := &preparing{panics: tc.panics}
			p := &Pipeline{Stages: []Stage{st}}
			for round := range 20 {
				ctx := withWindowMemo(context.Background())
				p.prepareQueries(ctx, Query{Text: "four"})
				scores, err := p.ScoreStages(ctx, Query{Text: "four"}, cands)
				if err != nil {
					t.Fatal(err)
				}
				if scores[0][0] != 4 || scores[0][1] != 4 {
					t.Fatalf("round %d: scores %v, want 4s", round, scores)
				}
				if n := st.prepared.Load() + st.computed.Load(); n != int32(round+1) {
					t.Fatalf("round %d: the query's work done %d times in all, want once a window", round, n)
				}
			}
			if tc.panics && st.prepared.Load() != 0 {
				t.Errorf("a panicking PrepareQuery prepared %d", st.prepared.Load())
			}
		})
	}
}
