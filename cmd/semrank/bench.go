package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/spf13/cobra"

	"github.com/semrank/semrank/cluster"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// benchOptions are the flags of semrank bench.
type benchOptions struct {
	indexPath, pipelinePath, dataDir string
	cpuProfile                       string
	remote                           []string
	rounds, size, limit, window      int
}

// newBenchCmd returns semrank bench.
func newBenchCmd() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench --index PATH --pipeline FILE --data DIR [--rounds 5] [-n 10] [--window N] [--remote URL,URL,...] [--cpuprofile FILE]",
		Short: "Time a bare Bleve search and the reranked one over DIR's queries, interleaved",
		Long: `Time, for every query of DIR/queries.jsonl, the bare Bleve search for the top
-n hits (the pipeline's first-stage query) and the same request through
rerank.Wrap, one after the other, --rounds times over all queries. Running
them interleaved keeps a noisy machine's swings out of the ratio. Prints each
path's median, quartiles and mean per search, and the ratio of the medians
(reranked over bare), with the median of the per-query ratios, and, with
more than one round, the first round's ratio alone (no query searched
before, so what stages keep by document helps only as far as different
queries' windows share documents, as when serving); then each
stage's (and the fusion's) median and mean time a window and its share of
the stages' time. --cpuprofile FILE writes a CPU profile of the timed
searches for go tool pprof. The bare search is Bleve's, on one core; the
reranked search's first stage runs on two where a query reads many
postings (index.Search), so over a large index the reranked search can
take less time than the bare one.

With --remote URL,URL,..., the servers of the shards of the same collection
(semrank index --shard, semrank serve), in shard order, it compares the
reranked search of --index, one index of every document, with the reranked
search of a coordinator over the shards (semrank serve --remote, run here
in-process): first that every query's top -n hits are the same ids, in the
same order, with the same scores to 1e-9 (it fails naming the first that
differs), then the two timed interleaved, and the ratio of their medians
(coordinator over one index).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBench(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.indexPath, "index", "", "index path (any Bleve index)")
	f.StringVar(&o.pipelinePath, "pipeline", "", "pipeline file, or a directory holding pipeline.yaml")
	f.StringVar(&o.dataDir, "data", "", "BEIR directory whose queries.jsonl is searched")
	f.IntVar(&o.rounds, "rounds", 5, "passes over the queries")
	f.IntVarP(&o.size, "n", "n", 10, "hits per search")
	f.IntVar(&o.limit, "queries", 0, "at most this many queries (0: all)")
	f.IntVar(&o.window, "window", 0, "rerank window (0: the pipeline's)")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the timed searches (both paths) to this file, for go tool pprof")
	f.StringSliceVar(&o.remote, "remote", nil, "compare with a coordinator over these shard servers (URLs, in shard order) instead of the bare search")
	for _, n := range []string{"index", "pipeline", "data"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

// runBench runs semrank bench.
func runBench(cmd *cobra.Command, o benchOptions) error {
	o.pipelinePath = pipelineFile(o.pipelinePath)
	if o.rounds <= 0 || o.size <= 0 || o.window < 0 {
		return fmt.Errorf("--rounds %d, -n %d and --window %d: want positive numbers (--window 0: the pipeline's)", o.rounds, o.size, o.window)
	}
	qs, err := readQueries(o.dataDir)
	if err != nil {
		return err
	}
	idx, err := index.OpenAny(o.indexPath)
	if err != nil {
		return err
	}
	defer idx.Close()
	p, _, err := rerank.LoadPipeline(o.pipelinePath, rerank.EnvOf(idx))
	if err != nil {
		return err
	}
	if o.window > 0 {
		p.Window = o.window
	}
	reqs, err := benchQueries(p, qs, o)
	if err != nil {
		return err
	}
	stages := newStageTimes(p)
	names := [2]string{fmt.Sprintf("bare top-%d", o.size), fmt.Sprintf("reranked (window %d)", p.WindowSize())}
	base, other := bleve.Index(idx), bleve.Index(rerank.Wrap(idx, p))
	if len(o.remote) > 0 {
		base = other
		if other, err = shardedBench(cmd, o, p, base, reqs); err != nil {
			return err
		}
		names = [2]string{fmt.Sprintf("one index, reranked (window %d)", p.WindowSize()), fmt.Sprintf("%d shards + coordinator, reranked", len(o.remote))}
	}
	stop, err := startCPUProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	r, err := bench(cmd.Context(), base, other, reqs, o.size, o.rounds, newBar(o.rounds*len(reqs), "searches"))
	if perr := stop(); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	if err := r.write(cmd.OutOrStdout(), names); err != nil {
		return err
	}
	return stages.write(cmd.OutOrStdout())
}

// stageTimes collects how long each stage of a pipeline, and its fusion,
// took a window (Pipeline.Observe).
type stageTimes struct {
	names []string // stages in pipeline order, then "fusion"
	mu    sync.Mutex
	times map[string][]time.Duration
}

// newStageTimes returns the collector of p's stage times, set as p.Observe.
func newStageTimes(p *rerank.Pipeline) *stageTimes {
	st := &stageTimes{names: append(p.StageNames(), "fusion"), times: map[string][]time.Duration{}}
	p.Observe = func(stage string, d time.Duration) {
		st.mu.Lock()
		st.times[stage] = append(st.times[stage], d)
		st.mu.Unlock()
	}
	return st
}

// write prints each stage's median and mean time a window and its share
// of the stages' summed time (stages of a window run concurrently, so
// the shares add up to more than a window's wall time).
func (st *stageTimes) write(w io.Writer) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	var total time.Duration
	for _, ds := range st.times {
		for _, d := range ds {
			total += d
		}
	}
	if total == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "stage\twindows\tp50 ms\tmean ms\tshare\t\n")
	for _, name := range st.names {
		ds := st.times[name]
		if len(ds) == 0 {
			continue
		}
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.0f%%\t\n", name, len(ds), float64(quantile(ds, 0.5))/1e6,
			float64(sum)/float64(len(ds))/1e6, 100*float64(sum)/float64(total))
	}
	return tw.Flush()
}

// startCPUProfile starts writing a CPU profile to path, when given, and
// returns the function that stops it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// benchQueries returns the first stage's queries for the texts of qs (at
// most --limit of them), leaving out those without searchable terms.
func benchQueries(p *rerank.Pipeline, qs []dataset.Query, o benchOptions) ([]query.Query, error) {
	var reqs []query.Query
	for _, q := range qs {
		bq, err := p.Query(q.FullText())
		if errors.Is(err, index.ErrEmptyQuery) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", q.ID, err)
		}
		reqs = append(reqs, bq)
	}
	if o.limit > 0 && len(reqs) > o.limit {
		reqs = reqs[:o.limit]
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("%s: no query has searchable terms", o.dataDir)
	}
	return reqs, nil
}

// shardedBench returns the pipeline p reranking over a coordinator of the
// --remote shards, after checking that it answers reqs as local, p over
// one index, does.
func shardedBench(cmd *cobra.Command, o benchOptions, p *rerank.Pipeline, local bleve.Index, reqs []query.Query) (bleve.Index, error) {
	// A measurement waits for slow shards rather than leave them out.
	coord, err := cluster.NewCoordinator(cmd.Context(), o.remote, cluster.Options{Timeout: time.Minute})
	if err != nil {
		return nil, err
	}
	pc, _, err := rerank.LoadPipeline(o.pipelinePath, rerank.EnvOf(coord))
	if err != nil {
		return nil, err
	}
	pc.Window = p.Window
	sharded := rerank.Wrap(coord, pc)
	same, err := sameTop(cmd.Context(), local, sharded, reqs, o.size)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "top %d of %d queries: the same ids, order and scores (to 1e-9) from one index and from %d shards; largest score difference %.3g\n",
		o.size, len(reqs), len(o.remote), same)
	return sharded, nil
}

// readQueries reads dir's queries.jsonl alone.
func readQueries(dir string) ([]dataset.Query, error) {
	qs, err := dataset.LoadQueries(dir)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, dataDirError("--data", dir, err)
	}
	return qs, err
}

// benchResult holds the times of each query's searches, bare and
// reranked, over every round.
type benchResult struct {
	bare, reranked []time.Duration
	ratios         []float64 // reranked ÷ bare, per query, on the medians of its rounds
	// The first round's searches: no query had been searched before, so
	// what a stage keeps by document helps only as far as windows of
	// different queries share documents, as in serving distinct queries.
	firstBare, firstReranked []time.Duration
}

// bench runs every request through bare and wrapped, interleaved, rounds
// times.
func bench(ctx context.Context, bare, wrapped bleve.Index, qs []query.Query, size, rounds int, bar interface{ Add(int) }) (*benchResult, error) {
	r := &benchResult{}
	perBare := make([][]time.Duration, len(qs))
	perRe := make([][]time.Duration, len(qs))
	for range rounds {
		for i, q := range qs {
			for j, x := range []bleve.Index{bare, wrapped} {
				req := bleve.NewSearchRequestOptions(q, size, 0, false)
				start := time.Now()
				if _, err := x.SearchInContext(ctx, req); err != nil {
					return nil, err
				}
				d := time.Since(start)
				if j == 0 {
					perBare[i] = append(perBare[i], d)
				} else {
					perRe[i] = append(perRe[i], d)
				}
			}
			bar.Add(1)
		}
	}
	for i := range qs {
		r.firstBare = append(r.firstBare, perBare[i][0])
		r.firstReranked = append(r.firstReranked, perRe[i][0])
		r.bare = append(r.bare, perBare[i]...)
		r.reranked = append(r.reranked, perRe[i]...)
		if b := quantile(perBare[i], 0.5); b > 0 {
			r.ratios = append(r.ratios, float64(quantile(perRe[i], 0.5))/float64(b))
		}
	}
	return r, nil
}

// quantile returns the q-quantile of ds (nearest rank).
func quantile[T time.Duration | float64](ds []T, q float64) T {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// sameTop checks that a and b answer every request's top size hits with
// the same ids, in the same order, with scores within 1e-9, and returns
// the largest score difference.
func sameTop(ctx context.Context, a, b bleve.Index, qs []query.Query, size int) (float64, error) {
	var most float64
	for i, q := range qs {
		var res [2]*bleve.SearchResult
		for j, x := range []bleve.Index{a, b} {
			var err error
			if res[j], err = x.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, size, 0, false)); err != nil {
				return 0, err
			}
			if st := res[j].Status; st != nil && len(st.Errors) > 0 {
				return 0, fmt.Errorf("query %d: partial answer: %v", i+1, st.Errors)
			}
		}
		if len(res[0].Hits) != len(res[1].Hits) {
			return 0, fmt.Errorf("query %d: %d hits from one index, %d from the shards", i+1, len(res[0].Hits), len(res[1].Hits))
		}
		for k, h := range res[0].Hits {
			g := res[1].Hits[k]
			d := math.Abs(g.Score - h.Score)
			if g.ID != h.ID || d > 1e-9 {
				return 0, fmt.Errorf("query %d, hit %d: %s (score %v) from one index, %s (%v) from the shards", i+1, k+1, h.ID, h.Score, g.ID, g.Score)
			}
			most = max(most, d)
		}
	}
	return most, nil
}

// write prints the times of the two searches, named by names.
func (r *benchResult) write(w io.Writer, names [2]string) error {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d.Nanoseconds())/1e6) }
	mean := func(ds []time.Duration) time.Duration {
		var t time.Duration
		for _, d := range ds {
			t += d
		}
		return t / time.Duration(max(1, len(ds)))
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "search\tsearches\tp25 ms\tp50 ms\tp75 ms\tmean ms\t\n")
	for _, row := range []struct {
		name string
		ds   []time.Duration
	}{{names[0], r.bare}, {names[1], r.reranked}} {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", row.name, len(row.ds), ms(quantile(row.ds, 0.25)), ms(quantile(row.ds, 0.5)), ms(quantile(row.ds, 0.75)), ms(mean(row.ds)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b := quantile(r.bare, 0.5)
	if b == 0 {
		return errors.New("bench: the bare searches took no measurable time")
	}
	if _, err := fmt.Fprintf(w, "ratio of medians: %.2fx; per-query ratio median %.2fx (p25 %.2fx, p75 %.2fx)\n",
		float64(quantile(r.reranked, 0.5))/float64(b), quantile(r.ratios, 0.5), quantile(r.ratios, 0.25), quantile(r.ratios, 0.75)); err != nil {
		return err
	}
	if len(r.firstBare) == len(r.bare) {
		return nil // one round: the line above is the first round's
	}
	fb := quantile(r.firstBare, 0.5)
	if fb == 0 {
		return errors.New("bench: the first round's bare searches took no measurable time")
	}
	_, err := fmt.Fprintf(w, "first round alone (every query searched for the first time): ratio of medians %.2fx\n",
		float64(quantile(r.firstReranked, 0.5))/float64(fb))
	return err
}
