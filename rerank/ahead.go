package rerank

import (
	"context"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2/search"
)

// ahead is a window's stages that read no stored document, scored on
// another goroutine from the moment the window is known (scoreAhead),
// while the search loads the documents the other stages read and makes
// the candidates; ScoreStages scores whatever is not taken yet and then
// takes their scores. Each stage is scored once, by whichever goroutine
// claims it first.
type ahead struct {
	cands  []Candidate    // the window, without stored fields
	state  []atomic.Int32 // by stage: unclaimed, aheadClaimed or scoreClaimed
	done   []chan struct{}
	scores [][]float64
	errs   []error
}

// A stage's state in an ahead.
const (
	unclaimed int32 = iota
	aheadClaimed
	scoreClaimed
)

// scoreAhead starts scoring, on another goroutine, the stages of p that
// read no stored document of the window's hits (docless, by stage; see
// DocReader), costliest first, while the search loads the documents the
// other stages read (reads, by hit). Such a stage scores the hits'
// candidates, with their given ranks given (nil: none), as the search
// will hand them to ScoreStages once their documents are loaded, so its
// scores are the same. It does nothing where no document loads (starting
// a goroutine then costs more than it overlaps), on one processor, where
// there is no other core to start on, and where the stages' statistics
// come from elsewhere (a Preparer fetches them first).
func (p *Pipeline) scoreAhead(ctx context.Context, q Query, window search.DocumentMatchCollection, given []int, reads, docless []bool) {
	m := WindowMemoOf(ctx)
	if m == nil || p.prepare != nil || runtime.GOMAXPROCS(0) <= 1 || len(docless) != len(p.Stages) || len(window) == 0 ||
		!slices.Contains(reads, true) {
		return
	}
	var order []int
	for _, i := range p.stageOrder() {
		if docless[i] {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return
	}
	cands := p.candidates(window)
	for i := range given {
		cands[i].GivenRank = given[i]
	}
	a := &ahead{cands: cands, state: make([]atomic.Int32, len(p.Stages)), done: make([]chan struct{}, len(p.Stages)),
		scores: make([][]float64, len(p.Stages)), errs: make([]error, len(p.Stages))}
	for i := range a.done {
		a.done[i] = make(chan struct{})
	}
	m.table.ahead.Store(a)
	go func() {
		for _, i := range order {
			if a.state[i].CompareAndSwap(unclaimed, aheadClaimed) {
				a.scores[i], a.errs[i] = p.scoreCosted(ctx, i, q, a.cands)
				close(a.done[i])
			}
		}
	}()
}

// aheadOf returns the stages ctx's window has scored ahead, if they
// scored cands: the same candidates in the same order, but for the stored
// fields that the stages scored ahead do not read.
func aheadOf(ctx context.Context, cands []Candidate) *ahead {
	m := WindowMemoOf(ctx)
	if m == nil {
		return nil
	}
	a := m.table.ahead.Load()
	if a == nil || len(a.cands) != len(cands) {
		return nil
	}
	for i, c := range cands {
		b := a.cands[i]
		if b.ID != c.ID || b.Rank != c.Rank || b.Score != c.Score || b.GivenRank != c.GivenRank {
			return nil
		}
	}
	return a
}

// scoreCosted scores p's stage i and counts its time, less its waits for
// other stages' results (see WindowMemo), in the stage's cost.
func (p *Pipeline) scoreCosted(ctx context.Context, i int, q Query, cands []Candidate) ([]float64, error) {
	var waited atomic.Int64
	start := time.Now()
	s, err := p.scoreStage(waitingOn(ctx, &waited), p.Stages[i], q, cands)
	p.observeCost(i, time.Since(start)-time.Duration(waited.Load()))
	return s, err
}
