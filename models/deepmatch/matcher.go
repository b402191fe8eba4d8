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

func (n *Net) forward(x, y Input) (float64, any) {
	st := n.newState()
	n.run(x, y, st)
	return st.s, st
}

func (n *Net) backward(x, y Input, st any, ds float64) { n.backprop(x, y, st.(*state), ds) }

func (n *Net) params() *params { return &n.ps }
