package concept

import (
	"math"
	"runtime"
)

// Iteration is one point of a training curve.
type Iteration struct {
	Iter   int     // 1-based iteration or epoch
	Phase  string  // e.g. "lbfgs", "pretrain-1", "finetune"
	Loss   float64 // training loss
	DevMAP float64 // map@10 on the held-out lists; NaN when there are none
}

// Progress receives the training curve as it is made; it may be nil.
type Progress func(Iteration)

// Report calls p when it is non-nil.
func (p Progress) Report(it Iteration) {
	if p != nil {
		p(it)
	}
}

// NoDev is the DevMAP of an iteration without held-out lists.
var NoDev = math.NaN()

// Workers returns n when positive, else the number of usable CPUs.
func Workers(n int) int {
	if n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}
