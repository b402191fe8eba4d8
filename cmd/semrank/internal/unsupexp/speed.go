package unsupexp

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/internal/cpuclock"
	"github.com/semrank/semrank/models/wmd"
)

// Pair is one transportation problem between two real documents.
type Pair struct {
	Query, Doc int // indexes into the query and document lists
	A, B       []float64
	Cost       []float64 // len(A)×len(B), row-major
}

// SpeedConfig sets the WMD speed comparison.
type SpeedConfig struct {
	Queries, Docs, K int
}

// SpeedResult holds the timings of one run.
type SpeedResult struct {
	Pairs              int
	MeanWords          [2]float64 // mean nBOW size of queries and documents
	SolvePerPair       time.Duration
	WMDPerPair         time.Duration // cost matrix + solve
	Exhaustive, Pruned time.Duration // total k-NN time over all queries
	Prepare            time.Duration // the index's one-time work (Index.Prepare), in neither
	// CPU time of the same runs (process user+system; 0 where unknown).
	SolveCPU, WMDCPU, ExhaustiveCPU, PrunedCPU time.Duration
	ExhaustiveStats                            wmd.Stats
	PrunedStats                                wmd.Stats
	SameNeighbours                             bool
	Values                                     []float64 // exact WMD of every pair, in pair order
}

// SpeedDocs returns the nBOW queries and documents of a dataset for the
// speed test: the first cfg.Queries queries and cfg.Docs corpus documents
// that have at least one word with a vector.
func SpeedDocs(space *wmd.Space, ds *dataset.Dataset, cfg SpeedConfig) (qs, docs []wmd.Doc, err error) {
	if cfg.Queries < 1 || cfg.Docs < 1 {
		return nil, nil, fmt.Errorf("%d queries and %d documents requested: want at least one of each", cfg.Queries, cfg.Docs)
	}
	for _, q := range ds.Queries {
		if len(qs) == cfg.Queries {
			break
		}
		if d := space.Doc(q.FullText()); !d.Empty() {
			qs = append(qs, d)
		}
	}
	for _, c := range ds.Corpus {
		if len(docs) == cfg.Docs {
			break
		}
		if d := space.Doc(c.FullText()); !d.Empty() {
			docs = append(docs, d)
		}
	}
	if len(qs) < cfg.Queries || len(docs) < cfg.Docs {
		return nil, nil, fmt.Errorf("dataset has %d usable queries and %d documents, want %d and %d", len(qs), len(docs), cfg.Queries, cfg.Docs)
	}
	return qs, docs, nil
}

// Speed times exact WMD per pair on every query×document pair, and
// pruned against exhaustive k-NN over the same pairs.
func Speed(ctx context.Context, space *wmd.Space, qs, docs []wmd.Doc, k int) (*SpeedResult, []Pair, error) {
	if len(qs) == 0 || len(docs) == 0 {
		return nil, nil, fmt.Errorf("%d queries and %d documents: want at least one of each", len(qs), len(docs))
	}
	res := &SpeedResult{}
	var pairs []Pair
	for qi, q := range qs {
		res.MeanWords[0] += float64(len(q.Words)) / float64(len(qs))
		for di, d := range docs {
			pairs = append(pairs, Pair{Query: qi, Doc: di, A: q.Weights, B: d.Weights, Cost: space.Costs(q, d, nil)})
		}
	}
	for _, d := range docs {
		res.MeanWords[1] += float64(len(d.Words)) / float64(len(docs))
	}
	res.Pairs = len(pairs)
	res.Values = make([]float64, len(pairs))
	var sol wmd.Solver
	start, c0 := time.Now(), cpuclock.Process()
	for i, p := range pairs {
		v, err := sol.Solve(p.A, p.B, p.Cost)
		if err != nil {
			return nil, nil, err
		}
		res.Values[i] = v
	}
	res.SolvePerPair = time.Since(start) / time.Duration(len(pairs))
	res.SolveCPU = (cpuclock.Process() - c0) / time.Duration(len(pairs))
	start, c0 = time.Now(), cpuclock.Process()
	for _, p := range pairs {
		if _, err := space.WMD(qs[p.Query], docs[p.Doc]); err != nil {
			return nil, nil, err
		}
	}
	res.WMDPerPair = time.Since(start) / time.Duration(len(pairs))
	res.WMDCPU = (cpuclock.Process() - c0) / time.Duration(len(pairs))

	// The index's one-time work (vocabulary, centroids, projected
	// vocabulary) is timed on its own, in neither k-NN timing.
	idx := space.NewIndex(docs)
	start = time.Now()
	idx.Prepare()
	res.Prepare = time.Since(start)
	res.SameNeighbours = true
	var ex, pr [][]wmd.Neighbor
	// A collection before each k-NN timing, so that neither pays for the
	// garbage of what ran before it (a run's pairs alone are 20-odd MB of
	// cost matrices); a collection in the middle of a 20 ms search takes
	// half the machine's two cores for a good part of it.
	runtime.GC()
	start, c0 = time.Now(), cpuclock.Process()
	for _, q := range qs {
		nb, st, err := idx.Exhaustive(ctx, q, k, wmd.Options{})
		if err != nil {
			return nil, nil, err
		}
		ex = append(ex, nb)
		res.ExhaustiveStats.WMD += st.WMD
	}
	res.Exhaustive = time.Since(start)
	res.ExhaustiveCPU = cpuclock.Process() - c0
	runtime.GC()
	start, c0 = time.Now(), cpuclock.Process()
	for _, q := range qs {
		nb, st, err := idx.KNN(ctx, q, k, wmd.Options{})
		if err != nil {
			return nil, nil, err
		}
		pr = append(pr, nb)
		res.PrunedStats.WCD += st.WCD
		res.PrunedStats.Projected += st.Projected
		res.PrunedStats.RWMD += st.RWMD
		res.PrunedStats.ICT += st.ICT
		res.PrunedStats.Warm += st.Warm
		res.PrunedStats.WMD += st.WMD
		res.PrunedStats.Abandoned += st.Abandoned
	}
	res.Pruned = time.Since(start)
	res.PrunedCPU = cpuclock.Process() - c0
	for i := range ex {
		if !slices.Equal(docIDs(ex[i]), docIDs(pr[i])) {
			res.SameNeighbours = false
		}
	}
	return res, pairs, nil
}

func docIDs(nb []wmd.Neighbor) []int {
	out := make([]int, len(nb))
	for i, n := range nb {
		out[i] = n.Doc
	}
	return out
}

// WritePairs writes pairs in the little-endian binary layout
// scripts/wmd_reference.py reads: per pair, int32 n, int32 m, then n+m+n·m
// float64 (a, b, cost row-major).
func WritePairs(w io.Writer, pairs []Pair) error {
	bw := bufio.NewWriter(w)
	for _, p := range pairs {
		binary.Write(bw, binary.LittleEndian, [2]int32{int32(len(p.A)), int32(len(p.B))})
		binary.Write(bw, binary.LittleEndian, p.A)
		binary.Write(bw, binary.LittleEndian, p.B)
		if err := binary.Write(bw, binary.LittleEndian, p.Cost); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadValues reads the float64 values scripts/wmd_reference.py writes.
func ReadValues(path string) ([]float64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(raw)%8 != 0 {
		return nil, fmt.Errorf("%s: %d bytes, not a multiple of 8 (float64 values)", path, len(raw))
	}
	out := make([]float64, len(raw)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return out, nil
}
