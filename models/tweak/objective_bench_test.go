package tweak

import "testing"

// BenchmarkObjective times one evaluation of the training objective with
// its gradient (each L-BFGS step makes one or more) against the forward
// pass alone, which every evaluation starts with: the ratio of the two is
// what the losses and back-propagation add, measured in the same run.
func BenchmarkObjective(b *testing.B) {
	set := testSet(b, true)
	w := InitialWeights()
	grad := make([]float64, len(w))
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			set.forward(w)
		}
	})
	for _, loss := range []Loss{LossSSE, LossPreference} {
		b.Run("objective-"+string(loss), func(b *testing.B) {
			for b.Loop() {
				set.objective(w, grad, loss, 0.1)
			}
		})
	}
}
