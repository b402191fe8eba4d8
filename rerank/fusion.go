package rerank

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/semrank/semrank/models"
)

// FusionInput is what a Fusion sees for one query: the candidates in
// first-stage order and scores[stage][candidate].
type FusionInput struct {
	Names      []string // stage names, in Scores order
	Candidates []Candidate
	Scores     [][]float64
}

// Fusion combines stage scores with the first-stage score and rank into
// one score per candidate. A Fusion that wraps another to observe it (as
// package server does for its metrics) may have a method Unwrap() Fusion
// returning the wrapped one; Index's Explain looks through it.
type Fusion interface {
	Fuse(in FusionInput) ([]float64, error)
}

// unwrapFusion returns the fusion f wraps, through any number of Unwrap
// methods (see Fusion), or f itself.
func unwrapFusion(f Fusion) Fusion {
	for {
		u, ok := f.(interface{ Unwrap() Fusion })
		if !ok {
			return f
		}
		f = u.Unwrap()
	}
}

// Feature names of the first stage in fused feature vectors.
const (
	FeatureFirstScore = "first_score" // z-normalised first-stage score
	FeatureFirstRank  = "first_rank"  // -log(rank): rank 1 highest
	// FeatureGivenRank is -log(position) in a given candidate list; present
	// only when the candidates came with one.
	FeatureGivenRank = "given_rank"
)

// optionalFeature reports features a Linear fusion may weight even when a
// query lacks them: a model learned on given candidate lists still
// applies to retrieved candidates.
func optionalFeature(name string) bool { return name == FeatureGivenRank }

// Features returns the fusion features of in: the first-stage score and
// rank features, then each stage's score, every score z-normalised within
// the query so that weights learned on one query apply to another.
// names[f] labels column f; x[i][f] is candidate i's value.
func Features(in FusionInput) (names []string, x [][]float64) {
	n := len(in.Candidates)
	given := false
	for _, c := range in.Candidates {
		given = given || c.GivenRank > 0
	}
	names = []string{FeatureFirstScore, FeatureFirstRank}
	if given {
		names = append(names, FeatureGivenRank)
	}
	stage0 := len(names)
	names = append(names, in.Names...)
	cols := make([][]float64, len(names))
	cols[0] = make([]float64, n)
	cols[1] = make([]float64, n)
	if given {
		cols[2] = make([]float64, n)
	}
	for i, c := range in.Candidates {
		cols[0][i] = c.Score
		cols[1][i] = -math.Log(float64(max(c.Rank, 1)))
		if given {
			// Candidates missing from the list rank after it.
			r := c.GivenRank
			if r <= 0 {
				r = n + 1
			}
			cols[2][i] = -math.Log(float64(r))
		}
	}
	for s := range in.Scores {
		cols[stage0+s] = append([]float64(nil), in.Scores[s]...)
	}
	for _, col := range cols {
		ZNormalize(col)
	}
	x = make([][]float64, n)
	flat := make([]float64, n*len(names))
	for i := range x {
		x[i] = flat[i*len(names) : (i+1)*len(names) : (i+1)*len(names)]
		for f := range names {
			x[i][f] = cols[f][i]
		}
	}
	return names, x
}

// ZNormalize rescales v in place to mean 0, standard deviation 1 (the
// population's); a constant column becomes all zeros. A value that is not
// a number makes every value NaN, for the caller to refuse. Values whose sum or squares overflow
// (a stage scoring near ±math.MaxFloat64) are first divided by the
// largest magnitude, which leaves their z-scores as they are.
func ZNormalize(v []float64) {
	if len(v) == 0 {
		return
	}
	mean, sd := moments(v)
	if math.IsInf(mean, 0) || math.IsInf(sd, 0) {
		big := 0.0
		for _, x := range v {
			big = max(big, math.Abs(x))
		}
		for i := range v {
			v[i] /= big
		}
		mean, sd = moments(v)
	}
	for i := range v {
		if sd < 1e-12 {
			v[i] = 0
		} else {
			v[i] = (v[i] - mean) / sd
		}
	}
}

// moments returns the mean and the (population) standard deviation of v.
func moments(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)))
}

// Linear is a weighted sum of the z-normalised features (see Features).
// Features without a weight count zero; weights for features the pipeline
// lacks are an error, so a fusion model cannot silently drop a stage.
type Linear struct {
	Weights map[string]float64
}

// Fuse implements Fusion.
func (l *Linear) Fuse(in FusionInput) ([]float64, error) { return fuseTerms(l, in) }

// termFusion is a fusion whose scores sum per-feature terms, the
// features of a window and their weights: Linear and Agreement.
type termFusion interface {
	Terms(in FusionInput) (names []string, x [][]float64, w []float64, err error)
}

// fuseTerms returns f's fused scores for in, the sums of its terms.
func fuseTerms(f termFusion, in FusionInput) ([]float64, error) {
	_, x, w, err := f.Terms(in)
	if err != nil {
		return nil, err
	}
	return weightedSum(x, w), nil
}

// Terms returns what l's fused scores sum: the features of in (see
// Features) and each feature's weight, zero for those l does not weigh.
func (l *Linear) Terms(in FusionInput) (names []string, x [][]float64, w []float64, err error) {
	names, x = Features(in)
	w, err = featureWeights(l.Weights, names, in.Names)
	return names, x, w, err
}

// featureWeights returns weights by feature, in names' order, refusing a
// weight for a feature that names lacks (a stage the pipeline does not
// have), unless the feature is optional.
func featureWeights(weights map[string]float64, names, stages []string) ([]float64, error) {
	for n := range weights {
		if !slices.Contains(names, n) && !optionalFeature(n) {
			return nil, fmt.Errorf("rerank: fusion weight for %q, but the pipeline has no such stage (stages: %v)", n, stages)
		}
	}
	w := make([]float64, len(names))
	for f, n := range names {
		w[f] = weights[n]
	}
	return w, nil
}

// weightedSum returns Σ_f w[f]·x[i][f] for every row i of x.
func weightedSum(x [][]float64, w []float64) []float64 {
	out := make([]float64, len(x))
	for i, row := range x {
		for f, v := range row {
			out[i] += w[f] * v
		}
	}
	return out
}

// Agreement is a linear fusion whose weights follow, query by query, how
// far each feature agrees with the rest of the fusion. A feature with
// prior weight w_f weighs w_f·max(0, r_f) in a window, r_f the Pearson
// correlation over the window's candidates of its term w_f·x_f with the
// sum of the other features' terms (features as Features gives them).
// Without judgments nothing says which stage helps on a collection; a
// stage that ranks a query's window unlike every other signal is more
// likely noise there than insight, and fixed weights would give it its
// full say. The first-stage rank is a feature like any other: where the
// stages agree against it, it counts less. Weights are priors, as
// Linear's; a window where nothing agrees fuses to zeros, which keeps the
// first-stage order.
type Agreement struct {
	Weights map[string]float64
}

// Fuse implements Fusion.
func (a *Agreement) Fuse(in FusionInput) ([]float64, error) { return fuseTerms(a, in) }

// Terms returns what a's fused scores sum for in: the features (see
// Features) and their weights in this window.
func (a *Agreement) Terms(in FusionInput) (names []string, x [][]float64, w []float64, err error) {
	for n, v := range a.Weights {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, nil, fmt.Errorf("rerank: fusion weight of %q is %v", n, v)
		}
	}
	names, x = Features(in)
	prior, err := featureWeights(a.Weights, names, in.Names)
	if err != nil {
		return nil, nil, nil, err
	}
	all := weightedSum(x, prior)
	own, rest := make([]float64, len(x)), make([]float64, len(x))
	w = make([]float64, len(names))
	for f := range names {
		if prior[f] == 0 {
			continue
		}
		for i, row := range x {
			own[i] = prior[f] * row[f]
			rest[i] = all[i] - own[i]
		}
		if r := stat.Correlation(own, rest, nil); r > 0 {
			w[f] = prior[f] * r
		}
	}
	return names, x, w, nil
}

// RRF is reciprocal rank fusion: Σ weight/(K + rank) over the first-stage
// ranking and each stage's ranking. Missing weights count 1; weights for
// stages the pipeline lacks are an error, as for Linear.
type RRF struct {
	K       float64            // 60 when zero
	Weights map[string]float64 // by stage name; FeatureFirstRank for the first stage
}

// Fuse implements Fusion.
func (r *RRF) Fuse(in FusionInput) ([]float64, error) {
	k := r.K
	if k <= 0 {
		k = 60
	}
	for n := range r.Weights {
		if n != FeatureFirstRank && !slices.Contains(in.Names, n) {
			return nil, fmt.Errorf("rerank: fusion weight for %q, but the pipeline has no such stage (stages: %v; %s for the first stage)", n, in.Names, FeatureFirstRank)
		}
	}
	weight := func(name string) float64 {
		if w, ok := r.Weights[name]; ok {
			return w
		}
		return 1
	}
	out := make([]float64, len(in.Candidates))
	w0 := weight(FeatureFirstRank)
	for i, c := range in.Candidates {
		out[i] = w0 / (k + float64(c.Rank))
	}
	for s, scores := range in.Scores {
		ws := weight(in.Names[s])
		for i, r := range ranksOf(scores) {
			out[i] += ws / (k + float64(r))
		}
	}
	return out, nil
}

// ranksOf returns each value's 1-based rank in descending order; ties keep
// index order.
func ranksOf(v []float64) []int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] > v[idx[b]] })
	r := make([]int, len(v))
	for pos, i := range idx {
		r[i] = pos + 1
	}
	return r
}

// FusionMethod is the models bundle method name of a saved Linear fusion.
const FusionMethod = "fusion-linear"

// Bundle returns l as a model bundle.
func (l *Linear) Bundle() *models.Bundle {
	names := make([]string, 0, len(l.Weights))
	for n := range l.Weights {
		names = append(names, n)
	}
	sort.Strings(names)
	w := make([]float64, len(names))
	for i, n := range names {
		w[i] = l.Weights[n]
	}
	b := models.New(FusionMethod, 1)
	b.AddStrings("features", names)
	b.AddTensor("weights", []int{len(w)}, w)
	return b
}

// LoadLinear reads a Linear fusion saved with Bundle().Save.
func LoadLinear(path string) (*Linear, error) { return models.LoadWith(path, ReadLinear) }

// ReadLinear reads a Linear fusion saved with Bundle().Save from r; name,
// the file r reads, is for errors.
func ReadLinear(r io.Reader, name string) (*Linear, error) {
	b, err := models.ReadChecked(r, name, FusionMethod, 1)
	if err != nil {
		return nil, err
	}
	names, err := b.Strings("features")
	if err != nil {
		return nil, err
	}
	w, err := b.Tensor("weights", 1)
	if err != nil {
		return nil, err
	}
	if len(w.Data) != len(names) {
		return nil, fmt.Errorf("rerank: %s: %d weights for %d features", name, len(w.Data), len(names))
	}
	l := &Linear{Weights: map[string]float64{}}
	for i, n := range names {
		if _, dup := l.Weights[n]; dup {
			// One of the two weights would be dropped unsaid.
			return nil, fmt.Errorf("rerank: %s: feature %q has two weights", name, n)
		}
		if v := w.Data[i]; math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("rerank: %s: weight of feature %q is %v", name, n, v)
		}
		l.Weights[n] = w.Data[i]
	}
	return l, nil
}
