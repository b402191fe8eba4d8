package embed

import (
	"cmp"
	"context"
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
// their counts) from sentences. Its memory grows with the distinct word
// pairs within the window.
func trainPPMI(ctx context.Context, sentences [][]string, words []string, counts []float64, cfg Config, progress func(int, int)) (*Vectors, error) {
	n, d := len(words), cfg.Dim
	ids, err := sentenceIDs(sentences, words)
	if err != nil {
		return nil, err
	}
	x, err := cooccurrences(ctx, ids, n, cfg.Window)
	if err != nil {
		return nil, err
	}
	// The matrix is symmetric: a word's total is its context's total.
	total := make([]float64, n)
	for c := range n {
		total[c] = floats.Sum(x.Val[x.Ptr[c]:x.Ptr[c+1]])
	}
	var allSmoothed float64
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
	// A vocabulary of no more words than dimensions has as many singular
	// vectors as words: the remaining components are 0.
	k := min(d, n)
	u, sigma, err := rsvd.Left(x, k, ppmiOversample, ppmiPower, uint64(cfg.Seed))
	if err != nil {
		return nil, err
	}
	data := make([]float64, n*d)
	for i := range n {
		v := data[i*d : (i+1)*d]
		for c := range k {
			v[c] = u.At(i, c) * math.Pow(sigma[c], ppmiEigen)
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

// cooccurrences returns the n×n symmetric matrix of weighted counts of
// word pairs within win of each other in ids, (win−d+1)/win at distance
// d, each pair counted both ways. Each cell sums in sentence order and
// the columns list their rows in order, so every sum over the matrix runs
// in one order and the vectors are the same bits every run. The pairs are
// kept once, lower word first, in one map while counting: half the cells
// of a map per word.
func cooccurrences(ctx context.Context, ids [][]int32, n, win int) (rsvd.CSC, error) {
	cells := map[uint64]float64{}
	for si, s := range ids {
		if si%256 == 0 {
			if err := ctx.Err(); err != nil {
				return rsvd.CSC{}, err
			}
		}
		for p, w := range s {
			for dist := 1; dist <= win && p+dist < len(s); dist++ {
				c := s[p+dist]
				x := float64(win-dist+1) / float64(win)
				lo, hi := min(w, c), max(w, c)
				k := uint64(lo)<<32 | uint64(hi)
				if lo == hi {
					cells[k] += x // counted both ways, in order
				}
				cells[k] += x
			}
		}
	}
	type cell struct {
		key uint64
		val float64
	}
	sorted := make([]cell, 0, len(cells))
	for k, v := range cells {
		sorted = append(sorted, cell{k, v})
	}
	cells = nil
	slices.SortFunc(sorted, func(a, b cell) int { return cmp.Compare(a.key, b.key) })
	// Column j holds the pairs (i, j), i ≤ j, and (j, i), j < i.
	x := rsvd.CSC{Rows: n, Ptr: make([]int, n+1)}
	for _, c := range sorted {
		lo, hi := int(c.key>>32), int(uint32(c.key))
		x.Ptr[hi+1]++
		if lo != hi {
			x.Ptr[lo+1]++
		}
	}
	for j := range n {
		x.Ptr[j+1] += x.Ptr[j]
	}
	nnz := x.Ptr[n]
	x.Idx, x.Val = make([]int, nnz), make([]float64, nnz)
	next := slices.Clone(x.Ptr[:n])
	put := func(col, row int, v float64) {
		x.Idx[next[col]], x.Val[next[col]] = row, v
		next[col]++
	}
	// In the pairs' order, column j meets its rows i < j (pairs (i, j))
	// while lo is below j, ascending, then its rows i ≥ j (pairs (j, i))
	// when lo is j, ascending: one sweep fills every column in row order.
	for _, c := range sorted {
		lo, hi := int(c.key>>32), int(uint32(c.key))
		put(hi, lo, c.val)
		if lo != hi {
			put(lo, hi, c.val)
		}
	}
	return x, nil
}
