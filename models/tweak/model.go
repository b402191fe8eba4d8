package tweak

import "math"

// Model is a learned term-weighting function: a term's weight in a text is
// softplus(w·φ(term, text)), and texts are compared by the cosine of their
// weight vectors. It carries the document (and query-log) frequency tables
// it was trained with, so it weighs a document the same at index time and
// at rerank time.
type Model struct {
	Config Config
	W      []float64 // one weight per feature, FeatureNames order
	DF     *DFTable
	QF     *DFTable // nil unless Config.QueryLog

	// Metrics holds dev metrics measured at training time ("dev_map", …).
	Metrics map[string]float64
	// Fingerprint identifies the training queries and documents.
	Fingerprint string
	// Analyzer identifies the analyzer whose terms the frequency tables
	// count and the features read: analyzers.ID() for a trained model; for
	// a loaded one, what its bundle recorded ("" when saved before
	// analyzers were recorded), kept so that re-saving it neither claims an
	// analyzer nobody checked nor changes its ID.
	Analyzer string

	id string // bundle ID, set by Save, Load or ID
}

// Stats returns the statistics the model featurizes texts with.
func (m *Model) Stats() Stats {
	s := Stats{DF: m.DF}
	if m.Config.QueryLog {
		s.QF = m.QF
	}
	return s
}

// Vector returns the learned term-weight vector of an analyzed text.
func (m *Model) Vector(t Text) Vector {
	return m.vector(t, m.Stats())
}

func (m *Model) vector(t Text, st Stats) Vector {
	phi := st.Features(make([]float64, 0, len(t.Terms)*NumFeatures), t)
	v := Vector{Terms: make([]string, len(t.Terms)), Weights: make([]float64, len(t.Terms))}
	for i, o := range t.Terms {
		v.Terms[i] = o.Term
		v.Weights[i] = softplus(dot(m.W, phi[i*NumFeatures:(i+1)*NumFeatures]))
	}
	return v
}

// DocVector returns the weight vector of a document.
func (m *Model) DocVector(title, body string) Vector { return m.Vector(Analyze(title, body)) }

// QueryVector returns the weight vector of a query's full text (title and
// body joined by a line break, see SplitQuery).
func (m *Model) QueryVector(text string) Vector { return m.Vector(Analyze(SplitQuery(text))) }

// QueryWeights returns the learned weights of a query's terms: the boosts
// of a weighted first-stage query.
func (m *Model) QueryWeights(text string) map[string]float64 { return m.QueryVector(text).Map() }

// Score returns the TWEAK cosine of a query and a document.
func (m *Model) Score(query, title, body string) float64 {
	return Cosine(m.QueryVector(query), m.DocVector(title, body))
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// softplus is log(1+e^z), computed without overflow; its derivative is the
// logistic function.
func softplus(z float64) float64 {
	if z > 30 {
		return z
	}
	if z < -30 {
		return math.Exp(z)
	}
	return math.Log1p(math.Exp(z))
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}
