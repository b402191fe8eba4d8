package eval

import (
	"math"
	"strings"
	"testing"
)

// exactRandomization enumerates all 2^n sign flips of the differences a-b:
// the exact two-sided p-value the Monte Carlo test in Compare estimates.
func exactRandomization(a, b []float64) float64 {
	n := len(a)
	obs := 0.0
	for i := range a {
		obs += a[i] - b[i]
	}
	obs = math.Abs(obs)
	extreme := 0
	for mask := 0; mask < 1<<n; mask++ {
		s := 0.0
		for i := range a {
			if mask>>i&1 == 1 {
				s += a[i] - b[i]
			} else {
				s -= a[i] - b[i]
			}
		}
		if math.Abs(s) >= obs-1e-12 {
			extreme++
		}
	}
	return float64(extreme) / float64(int(1)<<n)
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name    string
		a, b    []float64
		pT      float64 // paired t-test, computed independently
		delta   float64
		won     int
		lost    int
		tolT    float64
		checkMC bool
	}{
		{
			// d = 1, 3: t = 2 with 1 df (Cauchy): p = 1 - 2/π·atan(2).
			name: "df 1", a: []float64{1, 3}, b: []float64{0, 0},
			pT: 1 - 2/math.Pi*math.Atan(2), delta: 2, won: 2, tolT: 1e-9,
		},
		{
			// d = .1, .2, .3: mean .2, sd .1, t = 2√3 with 2 df, whose
			// two-sided p is 1 - t/√(2+t²) = 1 - √(6/7).
			name: "df 2", a: []float64{0.5, 0.7, 0.9}, b: []float64{0.4, 0.5, 0.6},
			pT: 1 - math.Sqrt(6.0/7), delta: 0.2, won: 3, tolT: 1e-9, checkMC: true,
		},
		{
			// d has mean .1 and sd .1291, t = √6 with 9 df; p computed by
			// Simpson integration of the t density in Python's stdlib.
			name: "df 9",
			a:    []float64{0.6, 0.45, 0.7, 0.65, 0.5, 0.8, 0.4, 0.55, 0.75, 0.6},
			b:    []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5},
			pT:   0.03678749787979141, delta: 0.1, won: 7, lost: 2, tolT: 1e-7, checkMC: true,
		},
		{
			// Identical runs: no difference, p = 1 in both tests.
			name: "identical", a: []float64{0.2, 0.5, 1}, b: []float64{0.2, 0.5, 1},
			pT: 1, delta: 0, tolT: 0, checkMC: true,
		},
		{
			// Every query gains the same: t is infinite.
			name: "constant gain", a: []float64{1, 1, 1, 1, 1}, b: []float64{0, 0, 0, 0, 0},
			pT: 0, delta: 1, won: 5, tolT: 0, checkMC: true,
		},
		{
			// One pair is no evidence.
			name: "one query", a: []float64{1}, b: []float64{0},
			pT: 1, delta: 1, won: 1, tolT: 0, checkMC: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compare(tc.a, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if c.N != len(tc.a) || c.Improved != tc.won || c.Hurt != tc.lost {
				t.Errorf("N, Improved, Hurt = %d, %d, %d; want %d, %d, %d", c.N, c.Improved, c.Hurt, len(tc.a), tc.won, tc.lost)
			}
			if math.Abs(c.Delta-tc.delta) > 1e-12 || math.Abs(c.MeanA-c.MeanB-c.Delta) > 1e-12 {
				t.Errorf("MeanA %g, MeanB %g, Delta %g; want delta %g", c.MeanA, c.MeanB, c.Delta, tc.delta)
			}
			if math.Abs(c.PTTest-tc.pT) > tc.tolT {
				t.Errorf("t-test p = %.12g, want %.12g", c.PTTest, tc.pT)
			}
			if c.PRandom < 0 || c.PRandom > 1 {
				t.Errorf("randomization p = %g, outside [0, 1]", c.PRandom)
			}
			if tc.checkMC {
				// 20000 trials: the standard error is below 0.004.
				if exact := exactRandomization(tc.a, tc.b); math.Abs(c.PRandom-exact) > 0.015 {
					t.Errorf("randomization p = %g, exact %g", c.PRandom, exact)
				}
			}
		})
	}
}

func TestCompareIdenticalIsOne(t *testing.T) {
	a := []float64{0.1, 0.9, 0.33, 0.5, 0, 1, 0.25}
	c, err := Compare(a, a)
	if err != nil {
		t.Fatal(err)
	}
	if c.PTTest != 1 || c.PRandom != 1 {
		t.Errorf("identical runs: p = %g (t-test), %g (randomization); want 1, 1", c.PTTest, c.PRandom)
	}
}

func TestCompareSymmetricAndReproducible(t *testing.T) {
	a := []float64{0.7, 0.2, 0.9, 0.4, 0.6, 0.55, 0.3, 0.8}
	b := []float64{0.5, 0.3, 0.6, 0.4, 0.5, 0.35, 0.4, 0.6}
	ab, _ := Compare(a, b)
	ba, _ := Compare(b, a)
	again, _ := Compare(a, b)
	if math.Abs(ab.PTTest-ba.PTTest) > 1e-12 || ab.Delta != -ba.Delta || ab.Improved != ba.Hurt {
		t.Errorf("Compare(a,b) = %+v, Compare(b,a) = %+v: not mirror images", ab, ba)
	}
	if again != ab {
		t.Errorf("Compare is not reproducible: %+v then %+v", ab, again)
	}
}

func TestCompareErrors(t *testing.T) {
	if _, err := Compare([]float64{1, 2}, []float64{1}); err == nil {
		t.Error("Compare accepted runs of different lengths")
	}
	if _, err := Compare(nil, nil); err == nil {
		t.Error("Compare accepted no queries")
	}
	// A NaN would make every permutation compare false, which reads as
	// the strongest possible evidence (p = 1/(trials+1)).
	for _, tc := range []struct{ a, b []float64 }{
		{[]float64{math.NaN(), 0.5, 1}, []float64{0, 0, 0}},
		{[]float64{1, 0.5, 1}, []float64{0, math.NaN(), 0}},
		{[]float64{math.Inf(1), 0.5}, []float64{math.Inf(1), 0}},
	} {
		if c, err := Compare(tc.a, tc.b); err == nil || !strings.Contains(err.Error(), "query ") {
			t.Errorf("Compare(%v, %v) = %+v, %v; want an error naming the query", tc.a, tc.b, c, err)
		}
	}
}
