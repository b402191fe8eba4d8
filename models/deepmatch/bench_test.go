package deepmatch

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"os"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// BenchmarkScoreSidesModel scores each of the first 50 judged queries of
// the BEIR directory $DEEPMATCH_BENCH_DATA against a window of 100
// candidates (its own and the next queries', as a window over a forum
// mixes threads) with the model saved at $DEEPMATCH_BENCH_MODEL, such as
// recipe A's; it is skipped when they are unset. It logs a hash of the
// scores' bits, so that two builds can be compared for exactness as well
// as for cost.
func BenchmarkScoreSidesModel(b *testing.B) {
	path, dir := os.Getenv("DEEPMATCH_BENCH_MODEL"), os.Getenv("DEEPMATCH_BENCH_DATA")
	if path == "" || dir == "" {
		b.Skip("DEEPMATCH_BENCH_MODEL and DEEPMATCH_BENCH_DATA unset")
	}
	m, err := Load(path, "")
	if err != nil {
		b.Fatal(err)
	}
	ds, err := dataset.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := FromDataset(ds)
	if err != nil {
		b.Fatal(err)
	}
	const queries, window = 50, 100
	windows := make([][]Side, 0, queries)
	for i := 0; i < len(qs) && len(windows) < queries; i++ {
		var w []Side
		for _, q := range qs[i:] {
			for _, c := range q.Cands {
				if len(w) < window {
					w = append(w, m.CandidateSide(Candidate{Text: c.Text, Meta: c.Meta}))
				}
			}
		}
		if len(w) < window {
			break
		}
		windows = append(windows, w)
	}
	if len(windows) == 0 {
		b.Fatalf("%s: no query with %d candidates from it on", dir, window)
	}
	h := fnv.New64a()
	for i, w := range windows {
		for _, s := range m.ScoreSides(qs[i].Text, w) {
			h.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(s)))
		}
	}
	b.Logf("%d windows of %d candidates, scores hash %x", len(windows), window, h.Sum64())
	for b.Loop() {
		for i, w := range windows {
			m.ScoreSides(qs[i].Text, w)
		}
	}
}
