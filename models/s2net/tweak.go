package s2net

import "github.com/semrank/semrank/models/tweak"

// TWEAK returns a Weighter giving S2Net TWEAK's learned term weights as
// inputs. Every text — query or candidate — is weighed as TWEAK weighs a
// query's full text (its first line as title, the rest as body), which for
// a document's title and text is exactly TWEAK's document vector.
func TWEAK(m *tweak.Model) Weighter { return tweakWeights{m} }

type tweakWeights struct{ m *tweak.Model }

func (w tweakWeights) TermWeights(text string) map[string]float64 { return w.m.QueryWeights(text) }
func (w tweakWeights) ID() string                                 { return w.m.ID() }
