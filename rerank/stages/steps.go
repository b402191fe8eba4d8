package stages

import (
	"fmt"

	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/rerank"
)

// steps counts a trainer's steps for rerank.TrainInput.Progress.
type steps struct {
	report      func(rerank.TrainStep)
	done, total int
}

// newSteps returns the counter of a training of at most total steps.
func newSteps(in rerank.TrainInput, total int) *steps {
	return &steps{report: in.Progress, total: total}
}

// step reports one step, when the input asked for progress.
func (s *steps) step(phase string, iter int, loss, devMAP float64) {
	if s.report == nil {
		return
	}
	s.done++
	s.report(rerank.TrainStep{Phase: phase, Iter: iter, Loss: loss, DevMAP: devMAP, Done: s.done, Total: max(s.total, s.done)})
}

// concept returns the concept trainers' progress reporting through s; nil
// when the input asked for none.
func (s *steps) concept() concept.Progress {
	if s.report == nil {
		return nil
	}
	return func(it concept.Iteration) { s.step(it.Phase, it.Iter, it.Loss, it.DevMAP) }
}

// logf writes a line of the trainer's notes to in.Log, when set.
func logf(in rerank.TrainInput, format string, args ...any) {
	if in.Log != nil {
		fmt.Fprintf(in.Log, format+"\n", args...)
	}
}
