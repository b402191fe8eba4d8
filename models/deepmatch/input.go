package deepmatch

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Input is one side of a pair as the networks see it: a sparse bag-of-words
// vector (log-scaled tf times idf, L2-normalised) over one side's
// vocabulary. The networks find the patches it overlaps through their
// per-word postings, so it carries no word bitmap.
type Input struct {
	Idx []uint32 // word ids, ascending
	Val []float64
}

// Vocab is the vocabulary of one side of the pairs, with idf weights.
type Vocab struct {
	Terms []string
	IDF   []float64
	index map[string]uint32
}

// NewVocab keeps the terms that occur in at least minDF of docs (each a
// token list), at most maxSize of them (the most frequent, ties by term),
// and weights them by idf = log((N+1)/df). Meta tokens (see CandidateTokens)
// get an idf of at least 1: "#q" is in every query and would otherwise
// weigh nothing.
func NewVocab(docs [][]string, minDF, maxSize int) *Vocab {
	df := map[string]int{}
	for _, d := range docs {
		seen := map[string]bool{}
		for _, t := range d {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	var terms []string
	for t, n := range df {
		if n >= minDF {
			terms = append(terms, t)
		}
	}
	sort.Slice(terms, func(i, j int) bool {
		if df[terms[i]] != df[terms[j]] {
			return df[terms[i]] > df[terms[j]]
		}
		return terms[i] < terms[j]
	})
	if maxSize > 0 && len(terms) > maxSize {
		terms = terms[:maxSize]
	}
	sort.Strings(terms)
	idf := make([]float64, len(terms))
	for i, t := range terms {
		idf[i] = math.Log(float64(len(docs)+1) / float64(df[t]))
		if isMeta(t) {
			idf[i] = max(idf[i], 1)
		}
	}
	v, _ := vocabFrom(terms, idf)
	return v
}

// vocabFrom rebuilds a vocabulary from stored terms and weights.
func vocabFrom(terms []string, idf []float64) (*Vocab, error) {
	if len(terms) != len(idf) {
		return nil, fmt.Errorf("deepmatch: vocabulary has %d terms and %d idf weights", len(terms), len(idf))
	}
	v := &Vocab{Terms: terms, IDF: idf, index: make(map[string]uint32, len(terms))}
	for i, t := range terms {
		if _, dup := v.index[t]; dup {
			return nil, fmt.Errorf("deepmatch: vocabulary lists %q twice", t)
		}
		v.index[t] = uint32(i)
	}
	return v, nil
}

// Len is the number of terms.
func (v *Vocab) Len() int { return len(v.Terms) }

// ID returns the id of term t.
func (v *Vocab) ID(t string) (uint32, bool) {
	id, ok := v.index[t]
	return id, ok
}

// Encode turns a token list into an Input; unknown tokens are dropped.
func (v *Vocab) Encode(tokens []string) Input {
	// Sorting the known words' ids and counting runs gives the ascending
	// ids and their frequencies without a map (this runs for every
	// candidate of every query).
	ids := make([]uint32, 0, len(tokens))
	for _, t := range tokens {
		if id, ok := v.index[t]; ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var in Input
	var tf []int
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		in.Idx = append(in.Idx, ids[i])
		tf = append(tf, j-i)
		i = j
	}
	in.Val = make([]float64, len(in.Idx))
	var norm float64
	for i, id := range in.Idx {
		w := (1 + math.Log(float64(tf[i]))) * v.IDF[id]
		in.Val[i] = w
		norm += w * w
	}
	if norm > 0 {
		norm = math.Sqrt(norm)
		for i := range in.Val {
			in.Val[i] /= norm
		}
	}
	return in
}
