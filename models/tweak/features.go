package tweak

import (
	"math"
	"slices"
	"strings"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
)

// Feature indices into a term's feature vector φ(term, text). The order is
// part of the model format: a bundle stores the names and Load refuses a
// model whose names differ from FeatureNames.
const (
	FeatBias   = iota // 1 for every term
	FeatLogTF         // log(tf+1)
	FeatLogDF         // log(df+1)
	FeatCap           // 1 when any occurrence is capitalised
	FeatLogLoc        // log(loc+1), loc = 1-based position of the first occurrence
	FeatLocLen        // loc/len
	FeatLogLen        // log(len+1), len = length of the text in tokens
	FeatTitle         // 1 when the term occurs in the title
	FeatLogQF         // log(qf+1), qf = number of logged queries holding the term
	NumFeatures
)

// FeatureNames names the features in index order.
var FeatureNames = []string{"bias", "log_tf", "log_df", "cap", "log_loc", "loc_len", "log_len", "title", "log_qf"}

// Occurrence summarises what a text says about one of its terms: the raw
// material of the features, before collection statistics are attached.
type Occurrence struct {
	Term    string
	TF      int  // occurrences in title and body
	First   int  // 1-based token position of the first occurrence
	Capital bool // any occurrence capitalised
	InTitle bool
}

// Text is an analyzed text: its distinct terms in term order, and its
// length in tokens.
type Text struct {
	Terms []Occurrence
	Len   int
}

// Analyze extracts the term occurrences of a text made of a title and a
// body. Positions run through the title into the body (the title comes
// first, as in Doc.FullText), and Len is the position of the last token,
// stop words included, since the analyzer keeps stop-word positions.
//
// The joined text is analyzed once, through the shared cache
// (analyzers.CachedAnalysis), where an index's other payload encoders find
// it too. A term is in the title when its first occurrence is: the line
// break that joins them ends every title token, so the title's tokens are
// the joined text's that start before the break, and they come first.
func Analyze(title, body string) Text {
	a := analyzers.CachedAnalysis(dataset.Doc{Title: title, Text: body}.FullText())
	// The occurrences sorted by term, each term's in text order: a run is
	// one term, and its first is its first occurrence.
	occ := make([]int, len(a.Tokens))
	for i := range occ {
		occ[i] = i
	}
	slices.SortStableFunc(occ, func(i, j int) int { return strings.Compare(a.Tokens[i], a.Tokens[j]) })
	var out Text
	if n := len(a.Tokens); n > 0 {
		out.Len = a.Term(n - 1).Position // positions increase
	}
	for k := 0; k < len(occ); {
		first := a.Term(occ[k])
		o := Occurrence{Term: first.Term, First: first.Position, InTitle: first.Start < len(title)}
		for ; k < len(occ) && a.Tokens[occ[k]] == first.Term; k++ {
			o.TF++
			o.Capital = o.Capital || a.Term(occ[k]).Capital
		}
		out.Terms = append(out.Terms, o)
	}
	return out
}

// SplitQuery splits a query's full text into title and body at the first
// line break, the inverse of dataset.Query.FullText. A one-line query is all
// title. Training and reranking both see queries through this split, so
// the title feature means the same on both sides.
func SplitQuery(text string) (title, body string) {
	title, body, _ = strings.Cut(text, "\n")
	return title, body
}

// Stats supplies the collection statistics features need.
type Stats struct {
	DF *DFTable // document frequencies; required
	QF *DFTable // query-log frequencies; nil disables the feature
	// QFLeaveOut holds the terms of a training query that is itself in the
	// log: their qf is counted without it. A training query and its
	// candidates are featurized this way, so that the terms they share do
	// not look logged merely because the query is, which an unseen test
	// query would not be.
	QFLeaveOut map[string]bool
}

// Features appends φ(term, text) for every term of t to dst, NumFeatures
// values per term, and returns it. The query-log feature is 0 when s.QF is
// nil.
func (s Stats) Features(dst []float64, t Text) []float64 {
	logLen := math.Log(float64(t.Len) + 1)
	for _, o := range t.Terms {
		var phi [NumFeatures]float64
		phi[FeatBias] = 1
		phi[FeatLogTF] = math.Log(float64(o.TF) + 1)
		phi[FeatLogDF] = math.Log(float64(s.DF.Freq(o.Term)) + 1)
		phi[FeatCap] = b2f(o.Capital)
		phi[FeatLogLoc] = math.Log(float64(o.First) + 1)
		if t.Len > 0 {
			phi[FeatLocLen] = float64(o.First) / float64(t.Len)
		}
		phi[FeatLogLen] = logLen
		phi[FeatTitle] = b2f(o.InTitle)
		if s.QF != nil {
			qf := s.QF.Freq(o.Term)
			if s.QFLeaveOut[o.Term] && qf > 0 {
				qf--
			}
			phi[FeatLogQF] = math.Log(float64(qf) + 1)
		}
		dst = append(dst, phi[:]...)
	}
	return dst
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
