package rerank

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/semrank/semrank/models"
)

// LambdaMART is a gradient-boosted regression-tree ranker (Burges 2010)
// over fusion features: each tree fits the LambdaRank gradients — pairwise
// logistic gradients weighted by the |ΔNDCG| of swapping the pair — with
// Newton leaf values. Trees capture what a linear fusion cannot: a stage
// that matters only when another is high, or metadata that flips a
// lexical score's meaning. No maintained Go library trains such models
// (github.com/dmitryikh/leaves only predicts), hence this implementation.
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

func (t *Tree) predict(x []float64) float64 {
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
			out[i] += m.Rate * m.Trees[t].predict(row)
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

// LambdaMARTOptions configure TrainLambdaMART.
type LambdaMARTOptions struct {
	Trees    int     // boosting rounds; 300 when zero
	Rate     float64 // shrinkage; 0.05 when zero
	Leaves   int     // leaves per tree, at least 2; 8 when zero
	MinLeaf  int     // minimum candidates per leaf; 20 when zero
	Patience int     // stop after this many rounds without validation gain; 50 when zero
	Sigma    float64 // logistic scale; 1 when zero
	Progress func(round int, trainMAP, validMAP float64)
}

func (o *LambdaMARTOptions) defaults() {
	if o.Trees == 0 {
		o.Trees = 300
	}
	if o.Rate == 0 {
		o.Rate = 0.05
	}
	if o.Leaves == 0 {
		o.Leaves = 8
	}
	if o.MinLeaf == 0 {
		o.MinLeaf = 20
	}
	if o.Patience == 0 {
		o.Patience = 50
	}
	if o.Sigma == 0 {
		o.Sigma = 1
	}
}

// check refuses options no training can use; call it after defaults.
func (o *LambdaMARTOptions) check() error {
	switch {
	case o.Trees < 0:
		return fmt.Errorf("rerank: LambdaMART trees %d, want > 0 (0 means the default, 300)", o.Trees)
	case o.Leaves < 2:
		return fmt.Errorf("rerank: LambdaMART leaves %d, want ≥ 2 (0 means the default, 8)", o.Leaves)
	case o.MinLeaf < 0:
		return fmt.Errorf("rerank: LambdaMART minimum leaf size %d, want > 0 (0 means the default, 20)", o.MinLeaf)
	case o.Patience < 0:
		return fmt.Errorf("rerank: LambdaMART patience %d, want > 0 (0 means the default, 50)", o.Patience)
	case !(o.Rate > 0) || math.IsInf(o.Rate, 0):
		return fmt.Errorf("rerank: LambdaMART rate %g, want > 0 (0 means the default, 0.05)", o.Rate)
	case !(o.Sigma > 0) || math.IsInf(o.Sigma, 0):
		return fmt.Errorf("rerank: LambdaMART sigma %g, want > 0 (0 means the default, 1)", o.Sigma)
	}
	return nil
}

type ltrQuery struct {
	x      [][]float64
	y      []int
	scores []float64
}

func ltrQueries(examples []Example) ([]ltrQuery, []string, error) {
	var names []string
	var out []ltrQuery
	for _, ex := range examples {
		ns, x := TreeFeatures(ex.Input)
		if names == nil {
			names = ns
		} else if fmt.Sprint(ns) != fmt.Sprint(names) {
			return nil, nil, fmt.Errorf("rerank: examples have different features: %v vs %v", ns, names)
		}
		if len(ex.Labels) != len(x) {
			return nil, nil, fmt.Errorf("rerank: example has %d labels for %d candidates", len(ex.Labels), len(x))
		}
		out = append(out, ltrQuery{x: x, y: ex.Labels, scores: make([]float64, len(x))})
	}
	return out, names, nil
}

// TrainLambdaMART boosts trees on train; when valid is non-empty, it keeps
// the number of trees that maximised validation MAP (early stopping). It
// refuses a train in which no query has a relevant candidate and a less
// relevant one, from which it would learn nothing, and one with fewer
// candidates than two leaves of MinLeaf, where no tree could split.
func TrainLambdaMART(train, valid []Example, opt LambdaMARTOptions) (*LambdaMART, error) {
	opt.defaults()
	if err := opt.check(); err != nil {
		return nil, err
	}
	tq, names, err := ltrQueries(train)
	if err != nil {
		return nil, err
	}
	if len(tq) == 0 {
		return nil, errors.New("rerank: no LambdaMART training examples")
	}
	if !gradedPair(train, func(y int) int { return max(y, 0) }) {
		// Grades ≤ 0 gain nothing: every lambda, so every tree, is zero.
		return nil, nothingToLearn(len(train), "a relevant candidate and a less relevant one")
	}
	vq, vnames, err := ltrQueries(valid)
	if err != nil {
		return nil, err
	}
	if len(vq) > 0 && fmt.Sprint(vnames) != fmt.Sprint(names) {
		return nil, fmt.Errorf("rerank: validation features %v differ from training %v", vnames, names)
	}
	var rows [][]float64
	for _, q := range tq {
		rows = append(rows, q.x...)
	}
	if len(rows) < 2*opt.MinLeaf {
		// No split leaves MinLeaf candidates on each side: every tree
		// would be one leaf, and the model would keep the first stage's
		// order.
		return nil, fmt.Errorf("rerank: LambdaMART needs at least %d training candidates (two leaves of %d) to split on anything; have %d: use the linear fusion, or a smaller minimum leaf", 2*opt.MinLeaf, opt.MinLeaf, len(rows))
	}
	m := &LambdaMART{Features: names, Rate: opt.Rate}
	best, bestRound := math.Inf(-1), 0
	grad := make([]float64, len(rows))
	hess := make([]float64, len(rows))
	for round := 0; round < opt.Trees; round++ {
		k := 0
		for _, q := range tq {
			g, h := lambdas(q.scores, q.y, opt.Sigma)
			copy(grad[k:], g)
			copy(hess[k:], h)
			k += len(q.y)
		}
		tree := fitTree(rows, grad, hess, opt.Leaves, opt.MinLeaf)
		m.Trees = append(m.Trees, tree)
		for _, q := range tq {
			for i := range q.x {
				q.scores[i] += opt.Rate * tree.predict(q.x[i])
			}
		}
		for _, q := range vq {
			for i := range q.x {
				q.scores[i] += opt.Rate * tree.predict(q.x[i])
			}
		}
		tm := meanMAP(tq)
		vm := tm
		if len(vq) > 0 {
			vm = meanMAP(vq)
		}
		if opt.Progress != nil {
			opt.Progress(round+1, tm, vm)
		}
		if vm > best+1e-9 {
			best, bestRound = vm, round+1
		}
		if len(vq) > 0 && round+1-bestRound >= opt.Patience {
			break
		}
	}
	if len(vq) > 0 {
		m.Trees = m.Trees[:bestRound]
	}
	return m, nil
}

// lambdas returns the lambdas of one query's candidates, the negative
// gradient of the LambdaRank cost with respect to their scores (positive
// pushes a candidate up), which the trees fit with Newton steps, and the
// diagonal of the Hessian.
func lambdas(s []float64, y []int, sigma float64) (g, h []float64) {
	n := len(s)
	g, h = make([]float64, n), make([]float64, n)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return s[order[a]] > s[order[b]] })
	pos := make([]int, n)
	for p, i := range order {
		pos[i] = p
	}
	ideal := idealDCG(y)
	if ideal == 0 {
		return g, h
	}
	gains := make([]float64, n)
	for i, v := range y {
		gains[i] = gain(v)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			gi, gj := gains[i], gains[j]
			if gi <= gj {
				continue
			}
			// |ΔNDCG| of swapping i and j.
			di, dj := 1/math.Log2(float64(pos[i]+2)), 1/math.Log2(float64(pos[j]+2))
			delta := math.Abs((gi-gj)*(di-dj)) / ideal
			rho := 1 / (1 + math.Exp(sigma*(s[i]-s[j])))
			lam := sigma * rho * delta
			g[i] += lam
			g[j] -= lam
			w := sigma * sigma * rho * (1 - rho) * delta
			h[i] += w
			h[j] += w
		}
	}
	return g, h
}

// gain is the NDCG gain of grade y, 2^y - 1; grades ≤ 0 gain 0, as
// package eval counts them not relevant.
func gain(y int) float64 {
	return math.Pow(2, float64(max(y, 0))) - 1
}

func idealDCG(y []int) float64 {
	ys := append([]int(nil), y...)
	sort.Sort(sort.Reverse(sort.IntSlice(ys)))
	d := 0.0
	for i, v := range ys {
		d += gain(v) / math.Log2(float64(i+2))
	}
	return d
}

func meanMAP(qs []ltrQuery) float64 {
	sum := 0.0
	for _, q := range qs {
		order := make([]int, len(q.scores))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return q.scores[order[a]] > q.scores[order[b]] })
		hits, ap := 0, 0.0
		for p, i := range order {
			if p >= 10 {
				break
			}
			if q.y[i] > 0 {
				hits++
				ap += float64(hits) / float64(p+1)
			}
		}
		if hits > 0 {
			sum += ap / float64(hits)
		}
	}
	return sum / float64(max(len(qs), 1))
}

// fitTree grows a tree leaf-wise (best gain first) to at most maxLeaves
// leaves, fitting the gradients g with Newton leaf values Σg/Σh.
func fitTree(x [][]float64, g, h []float64, maxLeaves, minLeaf int) Tree {
	t := Tree{}
	newNode := func(idx []int) int {
		sg, sh := 0.0, 0.0
		for _, i := range idx {
			sg += g[i]
			sh += h[i]
		}
		t.Feature = append(t.Feature, -1)
		t.Threshold = append(t.Threshold, 0)
		t.Left = append(t.Left, -1)
		t.Right = append(t.Right, -1)
		t.Value = append(t.Value, sg/(sh+1e-9))
		return len(t.Value) - 1
	}
	type leaf struct {
		node        int
		idx         []int
		gain        float64
		feat        int
		thr         float64
		left, right []int
	}
	split := func(l *leaf) {
		l.gain, l.feat = 0, -1
		if len(l.idx) < 2*minLeaf {
			return
		}
		sg, sh := 0.0, 0.0
		for _, i := range l.idx {
			sg += g[i]
			sh += h[i]
		}
		parent := sg * sg / (sh + 1e-9)
		nf := len(x[0])
		sorted := append([]int(nil), l.idx...)
		for f := 0; f < nf; f++ {
			sort.Slice(sorted, func(a, b int) bool { return x[sorted[a]][f] < x[sorted[b]][f] })
			lg, lh := 0.0, 0.0
			for k := 0; k < len(sorted)-1; k++ {
				i := sorted[k]
				lg += g[i]
				lh += h[i]
				if k+1 < minLeaf || len(sorted)-k-1 < minLeaf {
					continue
				}
				a, b := x[i][f], x[sorted[k+1]][f]
				if a == b {
					continue
				}
				gain := lg*lg/(lh+1e-9) + (sg-lg)*(sg-lg)/(sh-lh+1e-9) - parent
				if gain > l.gain {
					l.gain, l.feat, l.thr = gain, f, (a+b)/2
				}
			}
		}
		if l.feat >= 0 {
			l.left, l.right = nil, nil
			for _, i := range l.idx {
				if x[i][l.feat] <= l.thr {
					l.left = append(l.left, i)
				} else {
					l.right = append(l.right, i)
				}
			}
		}
	}
	all := make([]int, len(x))
	for i := range all {
		all[i] = i
	}
	root := &leaf{node: newNode(all), idx: all}
	split(root)
	leaves := []*leaf{root}
	for len(leaves) < maxLeaves {
		bi := -1
		for i, l := range leaves {
			if l.feat >= 0 && (bi < 0 || l.gain > leaves[bi].gain) {
				bi = i
			}
		}
		if bi < 0 {
			break
		}
		l := leaves[bi]
		ln, rn := newNode(l.left), newNode(l.right)
		t.Feature[l.node], t.Threshold[l.node] = l.feat, l.thr
		t.Left[l.node], t.Right[l.node] = ln, rn
		left := &leaf{node: ln, idx: l.left}
		right := &leaf{node: rn, idx: l.right}
		split(left)
		split(right)
		leaves = append(append(leaves[:bi], leaves[bi+1:]...), left, right)
	}
	return t
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
