package deepmatch

import (
	"sort"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/semrank/semrank/models/lda"
)

// Patch is a region of the interaction space: a set of words on each side.
// A pair (x, y) overlaps the patch when x holds one of its X words and y
// one of its Y words (Definition 3.1 of the paper).
type Patch struct {
	X, Y *roaring.Bitmap
}

// Size is the number of words of the patch on both sides.
func (p Patch) Size() int { return int(p.X.GetCardinality() + p.Y.GetCardinality()) }

// PatchesFromTopics trims each topic of m to its high-probability words on
// each side: at most maxWords words per side, and only words more probable
// under the topic than under a uniform distribution over that side's
// vocabulary. A topic left with no word on a side yields no patch.
func PatchesFromTopics(m *lda.Model, maxWords int) []Patch {
	var out []Patch
	for k := range m.Topics {
		x := trimmed(m, k, lda.X, maxWords)
		y := trimmed(m, k, lda.Y, maxWords)
		if x.IsEmpty() || y.IsEmpty() {
			continue
		}
		out = append(out, Patch{X: x, Y: y})
	}
	return out
}

func trimmed(m *lda.Model, k int, s lda.Side, maxWords int) *roaring.Bitmap {
	phi := m.Phi(k, s)
	var mass float64
	for _, p := range phi {
		mass += p
	}
	// p(w | k, side) > 1/V  ⇔  phi[w] > mass/V.
	floor := mass / float64(len(phi))
	b := roaring.New()
	for _, w := range m.TopWords(k, s, maxWords) {
		if phi[w] > floor {
			b.Add(uint32(w))
		}
	}
	return b
}

// overlap is the number of words two patches share, over both sides.
func overlap(a, b Patch) int {
	return int(a.X.AndCardinality(b.X) + a.Y.AndCardinality(b.Y))
}

// BuildDAG assigns each patch of a coarser level to the patches of the finer
// level below it that share the most words with it: children[q] lists, in
// ascending order, the fine patches assigned to coarse patch q. Every coarse
// patch gets at least minChildren children (the paper's m_ℓ; fewer only when
// the fine level is smaller), more when further fine patches tie with the
// weakest of those; and every fine patch that no coarse
// patch took goes to the coarse patch it overlaps most, so no local decision
// is cut off from the layers above.
func BuildDAG(fine, coarse []Patch, minChildren int) [][]int {
	children := make([][]int, len(coarse))
	taken := make([]bool, len(fine))
	for q, cp := range coarse {
		idx := make([]int, len(fine))
		ov := make([]int, len(fine))
		for i, fp := range fine {
			idx[i], ov[i] = i, overlap(cp, fp)
		}
		sort.SliceStable(idx, func(a, b int) bool { return ov[idx[a]] > ov[idx[b]] })
		n := min(minChildren, len(fine))
		for n > 0 && n < len(idx) && ov[idx[n]] > 0 && ov[idx[n]] == ov[idx[n-1]] {
			n++ // keep ties with the weakest chosen child
		}
		children[q] = append([]int(nil), idx[:n]...)
		for _, c := range children[q] {
			taken[c] = true
		}
	}
	for i, fp := range fine {
		if taken[i] || len(coarse) == 0 {
			continue
		}
		best, bestOv := 0, -1
		for q, cp := range coarse {
			if o := overlap(cp, fp); o > bestOv {
				best, bestOv = q, o
			}
		}
		children[best] = append(children[best], i)
	}
	for q := range children {
		sort.Ints(children[q])
	}
	return children
}
