// Package runs splits a loop over n items into contiguous runs on every
// core, for the per-document work of a search window (reading stored
// fields, decoding metadata) that is small per item but adds up.
package runs

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Do calls f(lo, hi) over consecutive runs of [0, n) covering it, as
// many at once as GOMAXPROCS allows (Each) while each run holds at least
// minRun items (one run, on the caller's goroutine, when n < 2·minRun),
// and returns the first error of a call in run order.
func Do(n, minRun int, f func(lo, hi int) error) error {
	k := max(1, min(runtime.GOMAXPROCS(0), n/max(1, minRun)))
	if k == 1 {
		return f(0, n)
	}
	return Each(k, func(w int) error { return f(w*n/k, (w+1)*n/k) })
}

// Each calls f(0), …, f(n-1), up to GOMAXPROCS at once, and returns the
// error of the first failing call in index order. The caller's goroutine
// takes items as the others do, and waits only for the items others have
// begun: on a machine whose cores are busy, a goroutine not yet running
// leaves its share to the caller instead of making it wait for the
// scheduler, which for a window's short calls cost more than running
// them concurrently saved. On one processor it calls them in turn and
// stops at the first error.
func Each(n int, f func(i int) error) error {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, n)
	var next atomic.Int64
	var done sync.WaitGroup
	done.Add(n)
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			errs[i] = f(i)
			done.Done()
		}
	}
	for range workers - 1 {
		go work()
	}
	work()
	done.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
