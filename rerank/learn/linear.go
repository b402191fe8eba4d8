// Package learn trains fusions, the functions a pipeline combines its
// stage scores with, from judged queries: a linear fusion (TrainLinear)
// and LambdaMART's boosted trees (TrainLambdaMART). Package rerank holds
// the fusions themselves, which pipelines load and score with.
package learn

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"

	"github.com/semrank/semrank/rerank"
)

// Example is one judged query for training a fusion: its fusion input and a
// relevance grade per candidate.
type Example struct {
	Input  rerank.FusionInput
	Labels []int
}

// LinearOptions configure TrainLinear.
type LinearOptions struct {
	// Loss is "pairwise" (RankNet-style logistic loss on every pair of
	// candidates with different grades, the default) or "logistic"
	// (pointwise logistic regression on relevant vs not).
	Loss string
	L2   float64 // L2 penalty on the weights; 1e-3 when zero
}

// TrainLinear learns rerank.Linear fusion weights from judged queries with
// L-BFGS. It refuses examples it can learn nothing from, where it would
// return weights that are all zero: no query with candidates of different
// grades (for the logistic loss, with a relevant candidate and another).
func TrainLinear(examples []Example, opt LinearOptions) (*rerank.Linear, error) {
	if opt.L2 < 0 || math.IsNaN(opt.L2) || math.IsInf(opt.L2, 0) {
		return nil, fmt.Errorf("rerank: fusion L2 penalty %g, want ≥ 0 (0 means the default, 1e-3)", opt.L2)
	}
	if opt.L2 == 0 {
		opt.L2 = 1e-3
	}
	switch opt.Loss {
	case "":
		opt.Loss = "pairwise"
	case "pairwise", "logistic":
	default:
		return nil, fmt.Errorf("rerank: unknown fusion loss %q (pairwise, logistic)", opt.Loss)
	}
	var names []string
	type query struct {
		x [][]float64
		y []int
	}
	var qs []query
	for _, ex := range examples {
		ns, x := rerank.Features(ex.Input)
		if names == nil {
			names = ns
		} else if fmt.Sprint(ns) != fmt.Sprint(names) {
			return nil, fmt.Errorf("rerank: fusion examples have different stages: %v vs %v", ns, names)
		}
		if len(ex.Labels) != len(x) {
			return nil, fmt.Errorf("rerank: fusion example has %d labels for %d candidates", len(ex.Labels), len(x))
		}
		qs = append(qs, query{x: x, y: ex.Labels})
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("rerank: no fusion training examples")
	}
	if opt.Loss == "logistic" {
		relevant := func(y int) int { return min(max(y, 0), 1) }
		if !gradedPair(examples, relevant) {
			return nil, nothingToLearn(len(examples), "a relevant candidate and another")
		}
	} else if !gradedPair(examples, func(y int) int { return y }) {
		return nil, nothingToLearn(len(examples), "candidates of different grades")
	}
	dim := len(names)
	nb := 0
	if opt.Loss == "logistic" {
		nb = 1 // bias
	}
	f := func(w, grad []float64) float64 {
		for i := range grad {
			grad[i] = 0
		}
		loss := 0.0
		count := 0.0
		for _, q := range qs {
			s := make([]float64, len(q.x))
			for i, xi := range q.x {
				for j := 0; j < dim; j++ {
					s[i] += w[j] * xi[j]
				}
				if nb == 1 {
					s[i] += w[dim]
				}
			}
			switch opt.Loss {
			case "logistic":
				for i, xi := range q.x {
					y := 0.0
					if q.y[i] > 0 {
						y = 1
					}
					p := sigmoid(s[i])
					loss += -(y*math.Log(p+1e-15) + (1-y)*math.Log(1-p+1e-15))
					g := p - y
					for j := 0; j < dim; j++ {
						grad[j] += g * xi[j]
					}
					grad[dim] += g
					count++
				}
			default:
				for i := range q.x {
					for j := range q.x {
						if q.y[i] <= q.y[j] {
							continue
						}
						d := s[i] - s[j]
						loss += softplus(-d)
						g := -sigmoid(-d)
						for k := 0; k < dim; k++ {
							grad[k] += g * (q.x[i][k] - q.x[j][k])
						}
						count++
					}
				}
			}
		}
		if count == 0 {
			count = 1
		}
		loss /= count
		for i := range grad {
			grad[i] /= count
		}
		for j := 0; j < dim; j++ {
			loss += opt.L2 * w[j] * w[j]
			grad[j] += 2 * opt.L2 * w[j]
		}
		return loss
	}
	p := optimize.Problem{
		Func: func(w []float64) float64 { return f(w, make([]float64, len(w))) },
		Grad: func(grad, w []float64) { f(w, grad) },
	}
	w0 := make([]float64, dim+nb)
	w0[1] = 1 // start from the first-stage order
	res, err := optimize.Minimize(p, w0, &optimize.Settings{MajorIterations: 500, GradientThreshold: 1e-7}, &optimize.LBFGS{})
	// Minimize returns a result with its error: keep the best weights when
	// the search stalled near the optimum (a failed line search), not when
	// it never found a finite loss (non-finite features), where the result
	// holds zeros.
	if err != nil && (res == nil || math.IsInf(res.F, 0) || math.IsNaN(res.F)) {
		return nil, fmt.Errorf("rerank: training fusion: %w", err)
	}
	l := &rerank.Linear{Weights: map[string]float64{}}
	for j, n := range names {
		l.Weights[n] = res.X[j]
	}
	return l, nil
}

// nothingToLearn is the error for n judged queries none of which has
// what, from which a fusion learns nothing: training would return weights
// (or trees) that are all zero.
func nothingToLearn(n int, what string) error {
	return fmt.Errorf("rerank: none of %d judged queries has %s: nothing to learn fusion weights from", n, what)
}

// gradedPair reports whether some example has two candidates of different
// grade(label).
func gradedPair(examples []Example, grade func(label int) int) bool {
	for _, ex := range examples {
		for _, y := range ex.Labels {
			if grade(y) != grade(ex.Labels[0]) {
				return true
			}
		}
	}
	return false
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}
