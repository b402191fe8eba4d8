package embed

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"github.com/semrank/semrank/internal/rsvd"
)

// Count-based vectors (MethodPPMI) follow the recommendations of Levy,
// Goldberg & Dagan (2015), "Improving distributional similarity with
// lessons learned from word embeddings", which carry word2vec's choices
// over to counts: co-occurrences within Config.Window of each other,
// weighted (W−d+1)/W at distance d, the weight word2vec's randomly shrunk
// window gives in expectation; the positive pointwise mutual information
// of word and context with the context distribution smoothed by the power
// 0.75 (word2vec's negative-sampling distribution); the Config.Dim leading
// singular vectors of that matrix, each scaled by the square root of its
// singular value (eigenvalue weighting p = 0.5); and every word's vector
// normalised to unit length. Counting needs no learning rate, sampling
// or epochs, so a few hundred thousand tokens — a test collection's own
// text — estimate every cell directly instead of through stochastic
// updates.
const (
	ppmiSmoothing  = 0.75 // context distribution smoothing α
	ppmiEigen      = 0.5  // eigenvalue weighting p
	ppmiOversample = 10   // rsvd sketch columns beyond Dim
	ppmiPower      = 2    // rsvd subspace iterations
)

// trainPPMI returns the count-based vectors of the vocabulary words (with
// their counts) from sentences.
func trainPPMI(ctx context.Context, sentences [][]string, words []string, counts []float64, cfg Config, progress func(int, int)) (*Vectors, error) {
	n, d := len(words), cfg.Dim
	if n <= d {
		return nil, fmt.Errorf("embed: %d words for %d dimensions: method ppmi needs more words than dimensions (lower dim or min_count)", n, d)
	}
	ids, err := sentenceIDs(sentences, words)
	if err != nil {
		return nil, err
	}
	// co[c][w] is the weighted count of word w within the window of
	// context c, symmetric; each cell sums in sentence order.
	co := make([]map[int32]float64, n)
	for i := range co {
		co[i] = map[int32]float64{}
	}
	win := cfg.Window
	for si, s := range ids {
		if si%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for p, w := range s {
			for dist := 1; dist <= win && p+dist < len(s); dist++ {
				c := s[p+dist]
				x := float64(win-dist+1) / float64(win)
				co[c][w] += x
				co[w][c] += x
			}
		}
	}
	// Columns (contexts) with their rows sorted, so that every sum below
	// runs in one order and the vectors are the same bits every run.
	x := rsvd.CSC{Rows: n, Ptr: make([]int, 1, n+1)}
	for c := range co {
		rows := make([]int, 0, len(co[c]))
		for w := range co[c] {
			rows = append(rows, int(w))
		}
		slices.Sort(rows)
		for _, w := range rows {
			x.Idx = append(x.Idx, w)
			x.Val = append(x.Val, co[c][int32(w)])
		}
		x.Ptr = append(x.Ptr, len(x.Idx))
		co[c] = nil
	}
	// The matrix is symmetric: a word's total is its context's total.
	total := make([]float64, n)
	var all, allSmoothed float64
	for c := range n {
		total[c] = floats.Sum(x.Val[x.Ptr[c]:x.Ptr[c+1]])
		all += total[c]
	}
	smoothed := make([]float64, n)
	for c, t := range total {
		smoothed[c] = math.Pow(t, ppmiSmoothing)
		allSmoothed += smoothed[c]
	}
	// PMI(w, c) = log(#(w,c)·Σα / (#w·#c^α)) with Σα = Σ_c #c^α; only the
	// positive values stay.
	keep := 0
	for c := range n {
		lo, hi := x.Ptr[c], x.Ptr[c+1]
		x.Ptr[c] = keep
		for p := lo; p < hi; p++ {
			w := x.Idx[p]
			if pmi := math.Log(x.Val[p] * allSmoothed / (total[w] * smoothed[c])); pmi > 0 {
				x.Idx[keep], x.Val[keep] = w, pmi
				keep++
			}
		}
	}
	x.Ptr[n] = keep
	x.Idx, x.Val = x.Idx[:keep], x.Val[:keep]
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	u, sigma, err := rsvd.Left(x, d, ppmiOversample, ppmiPower, uint64(cfg.Seed))
	if err != nil {
		return nil, err
	}
	data := make([]float64, n*d)
	for i := range n {
		v := data[i*d : (i+1)*d]
		for k := range d {
			v[k] = u.At(i, k) * math.Pow(sigma[k], ppmiEigen)
		}
		if norm := floats.Norm(v, 2); norm > 0 {
			floats.Scale(1/norm, v)
		}
	}
	if progress != nil {
		progress(1, 1)
	}
	return trained(words, counts, d, data)
}
