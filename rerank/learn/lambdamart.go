package learn

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/semrank/semrank/rerank"
)

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
		ns, x := rerank.TreeFeatures(ex.Input)
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

// TrainLambdaMART boosts a rerank.LambdaMART's trees on train, each fit
// to the LambdaRank gradients with Newton leaf values (no maintained Go
// library trains such models: github.com/dmitryikh/leaves only predicts).
// When valid is non-empty, it keeps
// the number of trees that maximised validation MAP (early stopping). It
// refuses a train in which no query has a relevant candidate and a less
// relevant one, from which it would learn nothing, and one with fewer
// candidates than two leaves of MinLeaf, where no tree could split.
func TrainLambdaMART(train, valid []Example, opt LambdaMARTOptions) (*rerank.LambdaMART, error) {
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
	m := &rerank.LambdaMART{Features: names, Rate: opt.Rate}
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
				q.scores[i] += opt.Rate * tree.Predict(q.x[i])
			}
		}
		for _, q := range vq {
			for i := range q.x {
				q.scores[i] += opt.Rate * tree.Predict(q.x[i])
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
func fitTree(x [][]float64, g, h []float64, maxLeaves, minLeaf int) rerank.Tree {
	t := rerank.Tree{}
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
