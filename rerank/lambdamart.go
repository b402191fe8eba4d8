package rerank

import (
	"fmt"
	"io"
	"math"

	"github.com/semrank/semrank/models"
)

// LambdaMART is a gradient-boosted regression-tree ranker (Burges 2010)
// over fusion features: each tree fits the LambdaRank gradients — pairwise
// logistic gradients weighted by the |ΔNDCG| of swapping the pair — with
// Newton leaf values. Trees capture what a linear fusion cannot: a stage
// that matters only when another is high, or metadata that flips a
// lexical score's meaning. Package learn trains it (TrainLambdaMART).
type LambdaMART struct {
	Features []string // feature names, in TreeFeatures order
	Rate     float64
	Trees    []Tree
}

// Tree is a binary regression tree stored as parallel node arrays; node 0
// is the root, Left < 0 marks a leaf.
type Tree struct {
	Feature   []int
	Threshold []float64
	Left      []int
	Right     []int
	Value     []float64
}

// Predict returns the value of the leaf that x, a row of features in the
// model's order, reaches.
func (t *Tree) Predict(x []float64) float64 {
	n := 0
	for t.Left[n] >= 0 {
		if x[t.Feature[n]] <= t.Threshold[n] {
			n = t.Left[n]
		} else {
			n = t.Right[n]
		}
	}
	return t.Value[n]
}

// rawPrefix starts the names of TreeFeatures' raw features.
const rawPrefix = "raw:"

// TreeFeatures returns the features trees split on: the z-normalised
// features of Features, then the raw stage scores and ranks (a tree can use
// absolute values such as a metadata flag, which per-query normalisation
// would erase when every candidate shares it).
func TreeFeatures(in FusionInput) (names []string, x [][]float64) {
	names, x = Features(in)
	names = append(append([]string(nil), names...), rawPrefix+FeatureFirstRank)
	for _, n := range in.Names {
		names = append(names, rawPrefix+n)
	}
	for i, c := range in.Candidates {
		row := append(x[i], float64(c.Rank))
		for s := range in.Scores {
			row = append(row, in.Scores[s][i])
		}
		x[i] = row
	}
	return names, x
}

// Fuse implements Fusion.
func (m *LambdaMART) Fuse(in FusionInput) ([]float64, error) {
	names, x := TreeFeatures(in)
	col, err := m.columns(names)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(x))
	row := make([]float64, len(m.Features))
	for i := range x {
		for f, c := range col {
			if c >= 0 {
				row[f] = x[i][c]
			} else {
				row[f] = 0
			}
		}
		for t := range m.Trees {
			out[i] += m.Rate * m.Trees[t].Predict(row)
		}
	}
	return out, nil
}

// columns maps the model's features to the input's columns; optional
// features the input lacks map to -1 (value 0).
func (m *LambdaMART) columns(names []string) ([]int, error) {
	pos := map[string]int{}
	for i, n := range names {
		pos[n] = i
	}
	col := make([]int, len(m.Features))
	for f, n := range m.Features {
		c, ok := pos[n]
		if !ok {
			if givenListFeature(n) {
				c = -1
			} else {
				return nil, fmt.Errorf("rerank: LambdaMART model uses feature %q, which the pipeline lacks (has %v)", n, names)
			}
		}
		col[f] = c
	}
	return col, nil
}

// LambdaMARTMethod is the models bundle method of a saved LambdaMART.
const LambdaMARTMethod = "fusion-lambdamart"

// Bundle returns m as a model bundle: per tree, its node arrays
// concatenated, with tree sizes to split them.
func (m *LambdaMART) Bundle() *models.Bundle {
	b := models.New(LambdaMARTMethod, 1)
	b.AddStrings("features", m.Features)
	var sizes, feat, thr, left, right, val []float64
	for _, t := range m.Trees {
		sizes = append(sizes, float64(len(t.Value)))
		for i := range t.Value {
			feat = append(feat, float64(t.Feature[i]))
			thr = append(thr, t.Threshold[i])
			left = append(left, float64(t.Left[i]))
			right = append(right, float64(t.Right[i]))
			val = append(val, t.Value[i])
		}
	}
	b.AddTensor("rate", []int{1}, []float64{m.Rate})
	b.AddTensor("sizes", []int{len(sizes)}, sizes)
	for name, v := range map[string][]float64{"feature": feat, "threshold": thr, "left": left, "right": right, "value": val} {
		b.AddTensor(name, []int{len(v)}, v)
	}
	return b
}

// LoadLambdaMART reads a model saved with Bundle().Save, validating every
// node reference so a damaged model cannot loop or index out of range, and
// refusing node values that are not finite and NaN split thresholds, which
// would give the candidates reaching them a NaN score or an arbitrary
// branch.
func LoadLambdaMART(path string) (*LambdaMART, error) {
	return models.LoadWith(path, ReadLambdaMART)
}

// ReadLambdaMART reads a model saved with Bundle().Save from r, as
// LoadLambdaMART does; name, the file r reads, is for errors.
func ReadLambdaMART(r io.Reader, name string) (*LambdaMART, error) {
	b, err := models.ReadChecked(r, name, LambdaMARTMethod, 1)
	if err != nil {
		return nil, err
	}
	m := &LambdaMART{}
	if m.Features, err = b.Strings("features"); err != nil {
		return nil, err
	}
	get := func(tensor string) ([]float64, error) {
		t, err := b.Tensor(tensor, 1)
		return t.Data, err
	}
	rate, err := get("rate")
	if err != nil || len(rate) != 1 || !(rate[0] > 0) || math.IsInf(rate[0], 0) {
		// Training refuses such a rate: NaN or infinite, it fuses every
		// candidate to a non-finite score; not positive, it reverses or
		// flattens the ranking.
		return nil, fmt.Errorf("rerank: %s: bad rate %v, want one finite number > 0", name, rate)
	}
	m.Rate = rate[0]
	sizes, err := get("sizes")
	if err != nil {
		return nil, err
	}
	arrs := map[string][]float64{}
	for _, n := range []string{"feature", "threshold", "left", "right", "value"} {
		if arrs[n], err = get(n); err != nil {
			return nil, err
		}
		if len(arrs[n]) != len(arrs["feature"]) {
			return nil, fmt.Errorf("rerank: %s: %d %s entries for %d nodes", name, len(arrs[n]), n, len(arrs["feature"]))
		}
	}
	off := 0
	for _, s := range sizes {
		// Compared before conversion: a huge size must not wrap off+n
		// around to a negative offset.
		if !(s >= 1 && s <= float64(len(arrs["value"])-off)) || s != math.Trunc(s) {
			return nil, fmt.Errorf("rerank: %s: tree size %v: the sizes exceed the node arrays", name, s)
		}
		n := int(s)
		t := Tree{}
		for i := off; i < off+n; i++ {
			f, l, r := int(arrs["feature"][i]), int(arrs["left"][i]), int(arrs["right"][i])
			if l >= 0 && (l <= i-off || l >= n || r <= i-off || r >= n || f < 0 || f >= len(m.Features) || math.IsNaN(arrs["threshold"][i])) {
				return nil, fmt.Errorf("rerank: %s: malformed tree node", name)
			}
			if v := arrs["value"][i]; math.IsNaN(v) || math.IsInf(v, 0) {
				// The candidates reaching the node would fuse to NaN.
				return nil, fmt.Errorf("rerank: %s: tree %d has a non-finite value, %g", name, len(m.Trees)+1, v)
			}
			t.Feature = append(t.Feature, f)
			t.Threshold = append(t.Threshold, arrs["threshold"][i])
			t.Left = append(t.Left, l)
			t.Right = append(t.Right, r)
			t.Value = append(t.Value, arrs["value"][i])
		}
		m.Trees = append(m.Trees, t)
		off += n
	}
	if off != len(arrs["value"]) {
		return nil, fmt.Errorf("rerank: %s: %d nodes not in any tree", name, len(arrs["value"])-off)
	}
	return m, nil
}
