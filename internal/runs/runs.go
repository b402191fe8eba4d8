// Package runs splits a loop over n items into contiguous runs on every
// core, for the per-document work of a search window (reading stored
// fields, decoding metadata) that is small per item but adds up.
package runs

import (
	"runtime"

	"golang.org/x/sync/errgroup"
)

// Do calls f(lo, hi) over consecutive runs of [0, n) covering it, each
// on a goroutine of its own, as many as GOMAXPROCS allows while each run
// holds at least minRun items (one run, on the caller's goroutine, when
// n < 2·minRun), and returns the first error of a call in run order.
func Do(n, minRun int, f func(lo, hi int) error) error {
	k := max(1, min(runtime.GOMAXPROCS(0), n/max(1, minRun)))
	if k == 1 {
		return f(0, n)
	}
	errs := make([]error, k)
	var g errgroup.Group
	for w := range k {
		g.Go(func() error {
			errs[w] = f(w*n/k, (w+1)*n/k)
			return nil
		})
	}
	_ = g.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
