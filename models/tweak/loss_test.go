package tweak

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGradient compares each loss's analytic gradient with central finite
// differences, at the initial weights and at random ones.
func TestGradient(t *testing.T) {
	for name, set := range map[string]*Set{"lists": testSet(t, true), "shared": sharedSet(t)} {
		t.Run(name, func(t *testing.T) { testGradient(t, set) })
	}
}

func testGradient(t *testing.T, set *Set) {
	rng := rand.New(rand.NewPCG(1, 2))
	points := [][]float64{InitialWeights()}
	for i := 0; i < 2; i++ {
		w := make([]float64, NumFeatures)
		for k := range w {
			w[k] = rng.NormFloat64() * 0.5
		}
		w[FeatBias] += 1
		points = append(points, w)
	}
	for _, loss := range Losses {
		for pi, w := range points {
			grad := make([]float64, NumFeatures)
			set.objective(w, grad, loss, 0.1)
			for k := range w {
				// h = 1e-6 drowns the difference in rounding on the
				// shared set, whose loss sums thousands of pairs.
				const h = 1e-4
				wp := append([]float64(nil), w...)
				wm := append([]float64(nil), w...)
				wp[k] += h
				wm[k] -= h
				num := (set.objective(wp, nil, loss, 0.1) - set.objective(wm, nil, loss, 0.1)) / (2 * h)
				if d := math.Abs(num - grad[k]); d > 1e-5*math.Max(1, math.Abs(num)) {
					t.Errorf("%s point %d: dL/d%s analytic %.8g, numeric %.8g", loss, pi, FeatureNames[k], grad[k], num)
				}
			}
		}
	}
}

// TestSharedRows checks the forward pass's shared feature rows: a set in
// which every query ranks the same documents stores fewer rows than terms,
// and still scores each query's candidates exactly as a set of that query
// alone does (its texts featurized with the same query left out of the log).
func TestSharedRows(t *testing.T) {
	set, ds := sharedSetData(t)
	terms := 0
	for _, tx := range set.texts {
		terms += len(tx.raw.Terms)
	}
	if rows := len(set.rows) / NumFeatures; rows*2 > terms {
		t.Errorf("%d distinct feature rows for %d terms: documents the queries share were not shared", rows, terms)
	}
	w := []float64{0.3, 1.1, -0.4, 0.2, -0.3, 0.5, -0.2, 0.7, -0.6}
	all := set.Scores(w)
	for qi, qid := range set.Queries() {
		one, err := NewSet(ds, []string{qid}, set.stats, true)
		if err != nil {
			t.Fatal(err)
		}
		q := set.queries[qi]
		got, want := all[q.begin:q.end], one.Scores(w)
		if len(got) != len(want) {
			t.Fatalf("%s: %d scores, want %d", qid, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s candidate %d: score %v in the shared set, %v alone", qid, i+1, got[i], want[i])
			}
		}
	}
}

func TestNonNegativeWeights(t *testing.T) {
	ds := testData(t)
	st := Stats{DF: corpusDF(ds), QF: queryLog(ds)}
	// Weights pushing every score strongly negative still give
	// non-negative term weights and cosines in [0, 1].
	for _, w := range [][]float64{
		{-20, -5, -5, -5, -5, -5, -5, -5, -5},
		{1, -3, 2, 0, -1, 0, 0, 0, 0},
		InitialWeights(),
	} {
		m := &Model{Config: Config{QueryLog: true}, W: w, DF: st.DF, QF: st.QF}
		q := m.QueryVector(ds.Queries[0].FullText())
		if q.Norm() == 0 {
			t.Errorf("w=%v: zero query vector", w)
		}
		for _, d := range ds.Corpus[:20] {
			v := m.DocVector(d.Title, d.Text)
			for i, x := range v.Weights {
				if !(x >= 0) {
					t.Fatalf("w=%v: weight of %q = %v", w, v.Terms[i], x)
				}
			}
			if c := Cosine(q, v); c < 0 || c > 1+1e-12 {
				t.Errorf("cosine %v outside [0,1]", c)
			}
		}
	}
}

func TestParseLoss(t *testing.T) {
	for _, l := range Losses {
		if got, err := ParseLoss(string(l)); err != nil || got != l {
			t.Errorf("ParseLoss(%q) = %q, %v", l, got, err)
		}
	}
	if _, err := ParseLoss("hinge"); err == nil {
		t.Error("unknown loss accepted")
	}
}
