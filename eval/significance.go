package eval

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Comparison is the outcome of a paired test between two systems' per-query
// values of one metric.
type Comparison struct {
	N        int     // paired queries
	MeanA    float64 // system A (e.g. the new run)
	MeanB    float64 // system B (e.g. the baseline)
	Delta    float64 // MeanA - MeanB
	PTTest   float64 // two-sided paired t-test p-value
	PRandom  float64 // two-sided paired randomization (sign-flip) test p-value
	Improved int     // queries where A > B
	Hurt     int     // queries where A < B
}

// RandomTrials is the number of sign-flip permutations of Compare.
const RandomTrials = 20000

// Compare runs a two-sided paired t-test and a paired randomization test on
// a and b, which hold one value per query in the same order. The
// randomization test uses a fixed seed so reported p-values reproduce.
func Compare(a, b []float64) (Comparison, error) {
	if len(a) != len(b) {
		return Comparison{}, errors.New("eval: compare: runs cover different numbers of queries")
	}
	n := len(a)
	c := Comparison{N: n}
	if n == 0 {
		return c, errors.New("eval: compare: no queries")
	}
	d := make([]float64, n)
	for i := range a {
		d[i] = a[i] - b[i]
		// A NaN difference compares false with every permuted mean, which
		// the randomization test would read as the strongest evidence.
		if math.IsNaN(d[i]) || math.IsInf(d[i], 0) {
			return Comparison{}, fmt.Errorf("eval: compare: query %d of %d: values %g and %g have no finite difference", i+1, n, a[i], b[i])
		}
		c.MeanA += a[i] / float64(n)
		c.MeanB += b[i] / float64(n)
		switch {
		case d[i] > 0:
			c.Improved++
		case d[i] < 0:
			c.Hurt++
		}
	}
	mean, sd := stat.MeanStdDev(d, nil)
	c.Delta = mean
	switch {
	case n < 2:
		c.PTTest = 1 // one pair is no evidence either way; t is undefined
	case sd == 0:
		if mean == 0 {
			c.PTTest = 1
		} else {
			c.PTTest = 0
		}
	default:
		t := mean / (sd / math.Sqrt(float64(n)))
		dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}
		c.PTTest = 2 * dist.Survival(math.Abs(t))
	}
	obs := math.Abs(mean)
	rng := rand.New(rand.NewPCG(20160612, 3))
	extreme := 0
	for t := 0; t < RandomTrials; t++ {
		s := 0.0
		for _, v := range d {
			if rng.Uint64()&1 == 1 {
				s += v
			} else {
				s -= v
			}
		}
		if math.Abs(s/float64(n)) >= obs-1e-12 {
			extreme++
		}
	}
	c.PRandom = float64(extreme+1) / float64(RandomTrials+1)
	return c, nil
}
