package deepmatch

// matcher is a trainable scorer of (x, y) pairs: DeepMatch and the paper's
// two inner-product baselines all train through it with the same loss.
type matcher interface {
	Score(x, y Input) float64
	// ScoreAll returns Score(x, y) for each of ys, computing x's side once.
	ScoreAll(x Input, ys []Input) []float64
	// forward scores the pair and returns what backward needs.
	forward(x, y Input) (float64, any)
	// backward adds ds·∂s/∂θ to the gradients of the touched parameters.
	backward(x, y Input, st any, ds float64)
	params() *params
}

// scoreAll is ScoreAll for an innerProduct: x's vector computed once.
func scoreAll(ip innerProduct, x Input, ys []Input) []float64 {
	qv := ip.queryVector(x)
	out := make([]float64, len(ys))
	for i, y := range ys {
		out[i] = dot(qv, ip.candidateVector(y))
	}
	return out
}

// innerProduct is a matcher whose score is the inner product of a vector
// of x's alone and one of y's alone (the paper's inner-product baselines):
// Score(x, y) is dot(queryVector(x), candidateVector(y)), to the bit.
type innerProduct interface {
	queryVector(x Input) []float64
	candidateVector(y Input) []float64
	vectorDim() int // the vectors' length
}

func (n *Net) forward(x, y Input) (float64, any) {
	st := n.newState()
	n.run(x, y, st)
	return st.s, st
}

func (n *Net) backward(x, y Input, st any, ds float64) { n.backprop(x, y, st.(*state), ds) }

func (n *Net) params() *params { return &n.ps }
