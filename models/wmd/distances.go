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
	cached, err := s.wordsOf(ctx, docs)
	if err != nil {
		return nil, err
	}
	solve := func(w *worker, i int) error {
		d := x.docs[docs[i]]
		if d.Empty() {
			out[i] = math.Inf(1)
			return nil
		}
		if cached {
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

// wordsOf is words for every document of docs, filling the missing rows
// of the cache on up to GOMAXPROCS goroutines, a block of words each.
func (s *search) wordsOf(ctx context.Context, docs []int) (bool, error) {
	if len(s.done) == 0 {
		return false, nil
	}
	miss := s.miss[:0]
	for _, d := range docs {
		for _, w := range s.x.local[d] {
			if !s.done[w] {
				s.done[w] = true // once: the rows are filled below
				miss = append(miss, w)
			}
		}
	}
	s.miss = miss
	const block = 64
	err := parallel(ctx, (len(miss)+block-1)/block, func(_ *worker, b int) error {
		part := miss[b*block : min(len(miss), (b+1)*block)]
		for k, w := range part {
			next := int32(-1)
			if k+1 < len(part) {
				next = part[k+1]
			}
			s.fillRow(w, next)
		}
		return nil
	})
	return true, err
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
