package tweak

import "testing"

// BenchmarkObjective times one evaluation of the training objective with
// its gradient (each L-BFGS step makes one or more) against the forward
// pass alone, which every evaluation starts with: the ratio of the two is
// what the losses and back-propagation add, measured in the same run.
//
// "lists" are the test queries' own candidate lists (SemEval: no document
// in two lists); "shared" gives every query every candidate document, as
// the BM25 lists of a full-retrieval collection share documents between
// queries.
func BenchmarkObjective(b *testing.B) {
	w := InitialWeights()
	grad := make([]float64, len(w))
	for _, sc := range []struct {
		name string
		set  *Set
	}{
		{"lists", testSet(b, true)},
		{"shared", sharedSet(b)},
	} {
		b.Run(sc.name+"/forward", func(b *testing.B) {
			for b.Loop() {
				sc.set.forward(w)
			}
		})
		for _, loss := range []Loss{LossSSE, LossPreference} {
			b.Run(sc.name+"/objective-"+string(loss), func(b *testing.B) {
				for b.Loop() {
					sc.set.objective(w, grad, loss, 0.1)
				}
			})
		}
	}
}
