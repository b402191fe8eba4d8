package wmd

import (
	"encoding/gob"
	"os"
	"slices"
	"sync"
)

// DumpedProblem is one transport problem a search solved, written by
// dumpProblem where WMD_DUMP names a file (an experiment: see
// experiment_test.go).
type DumpedProblem struct {
	QW, DW []int32 // the rows' and the columns' vocabulary ids
	A, B   []float64
	C      []float64
	Cut    float64 // the search's cutoff (+Inf for Distances)
	Site   string  // "distances" (Index.Distances) or "knn" (Index.KNN)
}

var dump struct {
	mu  sync.Mutex
	enc *gob.Encoder
}

func dumpProblem(site string, qw, dw []int32, a, b, c []float64, cut float64) {
	p := os.Getenv("WMD_DUMP")
	if p == "" {
		return
	}
	dump.mu.Lock()
	defer dump.mu.Unlock()
	if dump.enc == nil {
		f, err := os.Create(p)
		if err != nil {
			panic(err)
		}
		dump.enc = gob.NewEncoder(f)
	}
	if err := dump.enc.Encode(DumpedProblem{qw, dw, slices.Clone(a), slices.Clone(b), slices.Clone(c[:len(a)*len(b)]), cut, site}); err != nil {
		panic(err)
	}
}
