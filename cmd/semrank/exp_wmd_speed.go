package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/cmd/semrank/internal/unsupexp"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/internal/atomicfile"
	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/models/wmd"
)

func newWMDSpeedExperimentCmd() *cobra.Command {
	var (
		data, vectors, format, pairsOut, potValues string
		cfg                                        unsupexp.SpeedConfig
		repeat                                     int
	)
	cmd := &cobra.Command{
		Use:   "wmd-speed --data DIR --vectors V [--pairs-out FILE] [--pot-values FILE]",
		Short: "Time exact WMD per pair and pruned vs exhaustive WMD k-NN on real pairs",
		Long: `Builds --queries × --docs real document pairs from a BEIR directory (the
first usable queries and corpus documents), times this package's exact
transport solver per pair (cost matrix given, and end to end), and times
k-NN by prefetch and prune against exhaustive exact WMD over the same pairs,
checking both return the same neighbours. --repeat N (default 5) runs the
timings N times and reports the medians and each run's k-NN speed-up (the
machine may be shared: a single ~20 ms pruned search varies by ±20%).
The index's one-time preparation is timed apart, in neither. --pairs-out
writes the pairs for scripts/wmd_reference.py (POT's ot.emd2);
--pot-values compares the values that script wrote with this solver's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPositive(cmd, "queries", "docs", "k", "repeat"); err != nil {
				return err
			}
			if pairsOut != "" {
				if err := checkOutputOf("--pairs-out", pairsOut, []string{data}, vectors, potValues); err != nil {
					return err
				}
			}
			// Read the values to compare with before the timings, so a
			// missing or mismatched file fails at once.
			var pot []float64
			if potValues != "" {
				var err error
				if pot, err = unsupexp.ReadValues(potValues); err != nil {
					return err
				}
				if n := cfg.Queries * cfg.Docs; len(pot) != n {
					return fmt.Errorf("%s has %d values for %d pairs", potValues, len(pot), n)
				}
			}
			ds, err := dataset.Load(data)
			if err != nil {
				return err
			}
			v, err := embed.LoadFile(vectors, embed.Format(format))
			if err != nil {
				return err
			}
			space := wmd.NewSpace(v)
			qs, docs, err := unsupexp.SpeedDocs(space, ds, cfg)
			if err != nil {
				return err
			}
			var runs []*unsupexp.SpeedResult
			var pairs []unsupexp.Pair
			for range repeat {
				r, p, err := unsupexp.Speed(cmd.Context(), space, qs, docs, cfg.K)
				if err != nil {
					return err
				}
				runs, pairs = append(runs, r), p
			}
			res := medianSpeed(runs)
			w := cmd.OutOrStdout()
			if len(runs) > 1 {
				fmt.Fprintf(w, "timings: median of %d runs (pruned k-NN speed-up per run: %s)\n", len(runs), speedUps(runs))
			}
			fmt.Fprintf(w, "pairs: %d (%d queries × %d documents), mean nBOW size %.1f (queries) %.1f (documents)\n", res.Pairs, len(qs), len(docs), res.MeanWords[0], res.MeanWords[1])
			fmt.Fprintf(w, "exact WMD per pair: solver %.2f µs wall, %.2f µs CPU; with cost matrix %.2f µs wall, %.2f µs CPU\n",
				wmdMicros(res.SolvePerPair), wmdMicros(res.SolveCPU), wmdMicros(res.WMDPerPair), wmdMicros(res.WMDCPU))
			ps := res.PrunedStats
			fmt.Fprintf(w, "k-NN (k=%d) over %d queries: exhaustive %.1f ms wall, %.1f ms CPU (%d WMD); pruned %.1f ms wall, %.1f ms CPU (%d WCD, %d projected, %d RWMD, %d ICT, %d warm-pruned, %d WMD of which %d abandoned)\n",
				cfg.K, len(qs), wmdMillis(res.Exhaustive), wmdMillis(res.ExhaustiveCPU), res.ExhaustiveStats.WMD,
				wmdMillis(res.Pruned), wmdMillis(res.PrunedCPU), ps.WCD, ps.Projected, ps.RWMD, ps.ICT, ps.Warm, ps.WMD, ps.Abandoned)
			fmt.Fprintf(w, "index preparation (vocabulary, centroids, projected vocabulary; in neither k-NN timing): %.1f ms\n", wmdMillis(res.Prepare))
			fmt.Fprintf(w, "pruned k-NN speed-up: %.1f× wall, %.1f× CPU; same neighbours: %v\n",
				float64(res.Exhaustive)/float64(res.Pruned), float64(res.ExhaustiveCPU)/float64(max(res.PrunedCPU, 1)), res.SameNeighbours)
			if pairsOut != "" {
				if err := atomicfile.Write(pairsOut, func(f io.Writer) error { return unsupexp.WritePairs(f, pairs) }); err != nil {
					return err
				}
				fmt.Fprintf(w, "wrote %s\n", pairsOut)
			}
			if potValues != "" {
				var worst float64
				for i, x := range pot {
					worst = math.Max(worst, math.Abs(x-res.Values[i]))
				}
				fmt.Fprintf(w, "max |WMD − POT ot.emd2| over %d pairs: %.3g\n", len(pot), worst)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "BEIR directory (queries and corpus)")
	f.StringVar(&vectors, "vectors", "", "word vectors (embed bundle, word2vec or GloVe)")
	f.StringVar(&format, "format", "auto", "vector file format")
	f.StringVar(&pairsOut, "pairs-out", "", "write the pairs for scripts/wmd_reference.py")
	f.StringVar(&potValues, "pot-values", "", "compare with the values scripts/wmd_reference.py wrote")
	f.IntVar(&cfg.Queries, "queries", 10, "queries")
	f.IntVar(&cfg.Docs, "docs", 1000, "documents")
	f.IntVar(&cfg.K, "k", 10, "neighbours")
	f.IntVar(&repeat, "repeat", 5, "run the timings this many times and report the medians (the work counts and values are the same every run)")
	return cmd
}

// medianSpeed returns the first run with every timing replaced by its
// median over the runs; a run's neighbours must all agree.
func medianSpeed(runs []*unsupexp.SpeedResult) *unsupexp.SpeedResult {
	res := *runs[0]
	med := func(get func(*unsupexp.SpeedResult) time.Duration) time.Duration {
		ds := make([]time.Duration, len(runs))
		for i, r := range runs {
			ds[i] = get(r)
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	res.SolvePerPair = med(func(r *unsupexp.SpeedResult) time.Duration { return r.SolvePerPair })
	res.SolveCPU = med(func(r *unsupexp.SpeedResult) time.Duration { return r.SolveCPU })
	res.WMDPerPair = med(func(r *unsupexp.SpeedResult) time.Duration { return r.WMDPerPair })
	res.WMDCPU = med(func(r *unsupexp.SpeedResult) time.Duration { return r.WMDCPU })
	res.Exhaustive = med(func(r *unsupexp.SpeedResult) time.Duration { return r.Exhaustive })
	res.ExhaustiveCPU = med(func(r *unsupexp.SpeedResult) time.Duration { return r.ExhaustiveCPU })
	res.Pruned = med(func(r *unsupexp.SpeedResult) time.Duration { return r.Pruned })
	res.PrunedCPU = med(func(r *unsupexp.SpeedResult) time.Duration { return r.PrunedCPU })
	res.Prepare = med(func(r *unsupexp.SpeedResult) time.Duration { return r.Prepare })
	for _, r := range runs {
		res.SameNeighbours = res.SameNeighbours && r.SameNeighbours
	}
	return &res
}

// speedUps lists each run's wall-clock speed-up of pruned over
// exhaustive k-NN.
func speedUps(runs []*unsupexp.SpeedResult) string {
	var parts []string
	for _, r := range runs {
		parts = append(parts, fmt.Sprintf("%.1f×", float64(r.Exhaustive)/float64(max(r.Pruned, 1))))
	}
	return strings.Join(parts, " ")
}

func wmdMicros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func wmdMillis(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
