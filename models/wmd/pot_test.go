package wmd

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

type potPair struct {
	A, B, Cost []float64
	Pot        float64
}

// loadPOTPairs reads real SemEval sentence pairs (nBOW weights and word
// distance matrices from skip-gram vectors trained on the SemEval text)
// with the optimal costs POT's ot.emd2 found for them; see
// scripts/wmd_reference.py.
func loadPOTPairs(t testing.TB) []potPair {
	raw, err := os.ReadFile("../../testdata/wmd/pot_pairs.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Pairs []potPair }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Pairs) == 0 {
		t.Fatal("no pairs")
	}
	return f.Pairs
}

func TestSolveMatchesPOT(t *testing.T) {
	var s Solver
	for i, p := range loadPOTPairs(t) {
		got, err := s.Solve(p.A, p.B, p.Cost)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-p.Pot) > 1e-9 {
			t.Errorf("pair %d (%d×%d): EMD %.15g, POT ot.emd2 %.15g", i, len(p.A), len(p.B), got, p.Pot)
		}
		checkPlan(t, s.Flow(), p.A, p.B)
		lb := rwmd(p.A, p.B, p.Cost)
		ic, _ := ict(p.A, p.B, p.Cost, nil)
		if lb > ic+1e-12 || ic > got+1e-12 {
			t.Errorf("pair %d: RWMD %g, ICT %g, WMD %g: want RWMD ≤ ICT ≤ WMD", i, lb, ic, got)
		}
	}
}

// BenchmarkSolveReal solves the real sentence pairs of testdata/wmd; the
// gonum LP on the same pairs is the baseline of the same run.
func BenchmarkSolveReal(b *testing.B) {
	pairs := loadPOTPairs(b)
	for _, sspOnly := range []bool{false, true} {
		b.Run(map[bool]string{false: "simplex", true: "ssp"}[sspOnly], func(b *testing.B) {
			s := Solver{sspOnly: sspOnly}
			for b.Loop() {
				for _, p := range pairs {
					s.Solve(p.A, p.B, p.Cost)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pairs)), "ns/pair")
		})
	}
	b.Run("rwmd", func(b *testing.B) {
		for b.Loop() {
			for _, p := range pairs {
				rwmd(p.A, p.B, p.Cost)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pairs)), "ns/pair")
	})
}
