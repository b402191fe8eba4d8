package wmd

import (
	"encoding/gob"
	"errors"
	"io"
	"math"
	"os"
	"testing"
	"time"
)

// TestStartsExperiment reads the problems runs wrote (WMD_DUMP, see
// dump_experiment.go): from the file EXP_QD those of Index.Distances (a
// wmd stage's query to candidate problems), from EXP_KNN those of
// Index.KNN (an ssg stage's 2-hop searches), and
// reports their sizes, the cells left once shared words' common mass is
// cancelled, and for each start rule the pivots, full pricing passes,
// the largest difference from the least-cost start's result and the time
// a solve (four alternating passes, one core: run with GOMAXPROCS=1).
func TestStartsExperiment(t *testing.T) {
	for _, env := range []string{"EXP_QD", "EXP_KNN"} {
		path := os.Getenv(env)
		if path == "" {
			t.Skip("EXP_QD and EXP_KNN name the dumps")
		}
		site := map[string]string{"EXP_QD": "distances", "EXP_KNN": "knn"}[env]
		var ps []DumpedProblem
		for _, p := range readDump(t, path) {
			if p.Site == site {
				ps = append(ps, p)
			}
		}
		var n, m, shared, cells, left float64
		for _, p := range ps {
			n += float64(len(p.A))
			m += float64(len(p.B))
			sh, l := cancelled(p)
			shared += float64(sh)
			cells += float64(len(p.C))
			left += float64(l)
		}
		N := float64(len(ps))
		t.Logf("%s: %d problems, mean %.1f × %.1f words, %.1f shared; cells left after cancelling shared mass %.3f", env, len(ps), n/N, m/N, shared/N, left/cells)
		// Pilot potentials: the optimal row potentials of the first problem
		// of each row word list (a query, or a search's document).
		pilot := map[string][]float64{}
		var s Solver
		for _, p := range ps {
			k := key(p.QW)
			if _, ok := pilot[k]; !ok {
				startRule = 0
				if _, err := s.Solve(p.A, p.B, p.C); err != nil {
					t.Fatal(err)
				}
				pilot[k] = append([]float64(nil), s.sx.pi[:len(p.A)]...)
			}
		}
		type rule struct {
			name string
			set  func(p DumpedProblem)
		}
		zero := make([]float64, 256)
		rules := []rule{
			{"least cost", func(DumpedProblem) { startRule = 0 }},
			{"least reduced cost, u = 0", func(p DumpedProblem) { startRule, startU = 1, zero[:len(p.A)] }},
			{"least reduced cost, pilot u", func(p DumpedProblem) { startRule, startU = 1, pilot[key(p.QW)] }},
			{"Vogel", func(DumpedProblem) { startRule = 2 }},
		}
		base := make([]float64, len(ps))
		for r, rl := range rules {
			piv, scans, diff := 0, 0, 0.0
			for i, p := range ps {
				rl.set(p)
				d, exact, err := s.SolveCutoff(p.A, p.B, p.C, p.Cut)
				if err != nil {
					t.Fatal(err)
				}
				piv += s.sx.pivots
				scans += s.sx.scans
				if !exact {
					d = math.NaN()
				}
				if r == 0 {
					base[i] = d
				} else if !math.IsNaN(d) && !math.IsNaN(base[i]) {
					diff = max(diff, math.Abs(d-base[i]))
				}
			}
			t.Logf("%s, %s: %.1f pivots, %.1f pricing passes, largest difference %.3g", env, rl.name, float64(piv)/N, float64(scans)/N, diff)
		}
		var took [4]time.Duration
		for range 4 {
			for r, rl := range rules {
				t0 := time.Now()
				for _, p := range ps {
					rl.set(p)
					s.SolveCutoff(p.A, p.B, p.C, p.Cut)
				}
				took[r] += time.Since(t0)
			}
		}
		startRule = 0
		for r, rl := range rules {
			t.Logf("%s, %s: %.1f µs a solve", env, rl.name, float64(took[r].Microseconds())/4/N)
		}
	}
}

func readDump(t *testing.T, path string) []DumpedProblem {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := gob.NewDecoder(f)
	var ps []DumpedProblem
	for {
		var p DumpedProblem
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return ps
		} else if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
}

// cancelled returns the words p's two sides share and the cells left
// once each shared word's common mass stays put (W1 depends on a − b
// alone): the rows and columns with mass left.
func cancelled(p DumpedProblem) (shared, cells int) {
	a := append([]float64(nil), p.A...)
	b := append([]float64(nil), p.B...)
	for i, w := range p.QW {
		for j, v := range p.DW {
			if w == v {
				shared++
				c := min(a[i], b[j])
				a[i] -= c
				b[j] -= c
			}
		}
	}
	rows, cols := 0, 0
	for _, x := range a {
		if x > 1e-15 {
			rows++
		}
	}
	for _, x := range b {
		if x > 1e-15 {
			cols++
		}
	}
	return shared, rows * cols
}

func key(w []int32) string {
	b := make([]byte, 0, 4*len(w))
	for _, x := range w {
		b = append(b, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
	}
	return string(b)
}
