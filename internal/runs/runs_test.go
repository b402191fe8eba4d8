package runs

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// TestDo: the runs cover [0, n) once each, in contiguous pieces of at
// least minRun items (but for n < minRun), and the first error in run
// order is returned.
func TestDo(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, tc := range []struct{ n, minRun, wantRuns int }{
		{0, 16, 1}, {5, 16, 1}, {31, 16, 1}, {32, 16, 2}, {100, 16, 4}, {100, 40, 2}, {1000, 1, 4}, {3, 0, 3},
	} {
		t.Run(fmt.Sprint(tc.n, "/", tc.minRun), func(t *testing.T) {
			var mu sync.Mutex
			seen := make([]int, tc.n)
			runs := 0
			err := Do(tc.n, tc.minRun, func(lo, hi int) error {
				mu.Lock()
				defer mu.Unlock()
				runs++
				if hi-lo < tc.minRun && tc.n >= tc.minRun {
					t.Errorf("run [%d, %d) shorter than %d", lo, hi, tc.minRun)
				}
				for i := lo; i < hi; i++ {
					seen[i]++
				}
				return nil
			})
			if err != nil || runs != tc.wantRuns {
				t.Errorf("%d runs, %v; want %d", runs, err, tc.wantRuns)
			}
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("item %d visited %d times", i, c)
				}
			}
		})
	}
	first, second := errors.New("first"), errors.New("second")
	err := Do(100, 10, func(lo, hi int) error {
		switch lo {
		case 0:
			return nil
		case 25:
			return first
		default:
			return second
		}
	})
	if err != first {
		t.Errorf("error %v, want the first run's in order", err)
	}
}

// TestEach: every item is called once, on any number of processors, and
// the first error in index order is returned; on one processor the items
// after a failing one are not called.
func TestEach(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			for _, n := range []int{0, 1, 2, 7, 100} {
				var mu sync.Mutex
				seen := make([]int, n)
				if err := Each(n, func(i int) error {
					mu.Lock()
					defer mu.Unlock()
					seen[i]++
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				for i, c := range seen {
					if c != 1 {
						t.Fatalf("n %d: item %d called %d times", n, i, c)
					}
				}
			}
			errs := []error{nil, nil, errors.New("third"), errors.New("fourth"), nil}
			var called sync.Map
			err := Each(len(errs), func(i int) error {
				called.Store(i, true)
				return errs[i]
			})
			if err != errs[2] {
				t.Errorf("error %v, want the third item's", err)
			}
			if _, ok := called.Load(4); procs == 1 && ok {
				t.Error("on one processor, an item after the failing one was called")
			}
		})
	}
}
