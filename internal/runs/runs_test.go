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
