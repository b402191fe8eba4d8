package wmd

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Distances returns the exact WMD from q to each document of docs (indexes
// into the index), +Inf for an empty document: what Space.WMD(q, doc)
// returns, bit for bit, for every one. The word distances from q's words
// to the documents' words are computed once each, shared by every
// document holding the word, and the transport problems are solved on up
// to GOMAXPROCS goroutines; each result depends only on its own problem,
// so the output does not depend on how many ran.
func (x *Index) Distances(ctx context.Context, q Doc, docs []int) ([]float64, error) {
	out := make([]float64, len(docs))
	if q.Empty() {
		for i := range out {
			out[i] = math.Inf(1)
		}
		return out, nil
	}
	s := x.begin(q)
	defer x.end(s)
	// The rows of the documents' words are filled by the goroutines that
	// solve the documents, each row by the first to need it: one pass
	// over the window on every core rather than two.
	var rows []atomic.Uint32
	if len(s.done) > 0 {
		rows = s.rowStates(len(x.words))
	}
	solve := func(w *worker, i int) error {
		d := x.docs[docs[i]]
		if d.Empty() {
			out[i] = math.Inf(1)
			return nil
		}
		if rows != nil {
			s.fillRows(docs[i], rows)
			w.cost = s.costsInto(w.cost, docs[i])
		} else {
			w.cost = x.space.Costs(q, d, w.cost)
		}
		v, err := w.sol.Solve(q.Weights, d.Weights, w.cost)
		out[i] = v
		return err
	}
	return out, parallel(ctx, len(docs), solve)
}

// Row states of fillRows: not filled, being filled, filled.
const (
	rowEmpty uint32 = iota
	rowFilling
	rowFilled
)

// rowStates returns n row states, all rowEmpty, kept in s.
func (s *search) rowStates(n int) []atomic.Uint32 {
	if cap(s.rows) < n {
		s.rows = make([]atomic.Uint32, n)
	}
	s.rows = s.rows[:n]
	for i := range s.rows {
		s.rows[i].Store(rowEmpty)
	}
	return s.rows
}

// fillRows makes sure the distance rows of every word of document doc
// are filled: it fills those no goroutine has taken, then waits for
// those another is filling. Goroutines may call it at once.
func (s *search) fillRows(doc int, rows []atomic.Uint32) {
	words := s.x.local[doc]
	for k, w := range words {
		if rows[w].Load() != rowEmpty || !rows[w].CompareAndSwap(rowEmpty, rowFilling) {
			continue
		}
		next := int32(-1)
		if k+1 < len(words) {
			next = words[k+1]
		}
		s.fillRow(w, next)
		rows[w].Store(rowFilled)
	}
	for _, w := range words {
		for rows[w].Load() != rowFilled {
			runtime.Gosched()
		}
	}
}

// worker is one goroutine's scratch space for solving transport problems.
type worker struct {
	sol  Solver
	cost []float64
}

var workers = sync.Pool{New: func() any { return new(worker) }}

// parallel calls f for every i in [0, n), on up to GOMAXPROCS goroutines
// that take the next i as they finish one, each with its own worker. It
// returns the error of the lowest i that failed, or ctx's error.
func parallel(ctx context.Context, n int, f func(w *worker, i int) error) error {
	procs := min(runtime.GOMAXPROCS(0), n)
	errs := make([]error, n)
	var next atomic.Int64
	run := func() {
		w := workers.Get().(*worker)
		defer workers.Put(w)
		for {
			i := int(next.Add(1) - 1)
			if i >= n || ctx.Err() != nil {
				return
			}
			errs[i] = f(w, i)
		}
	}
	var wg sync.WaitGroup
	for range procs - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run()
		}()
	}
	run()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
