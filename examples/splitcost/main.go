// Command splitcost times, query by query, Bleve's own search beside
// index.Search, which splits a search over two cores, with every search
// split (index.MinSplitPostings 0), and prints each query's postings (its
// searcher's estimate, which index.Search's threshold reads), the two
// medians and their ratio, then by postings, in powers of two, the mean
// ratio of wall times and of CPU times (the process's, both cores): what
// splitting saves in waiting and what it costs in work. It is how
// MinSplitPostings was chosen. With --sum, index.Search scores match
// queries term at a time (index.SumTerms), split over two cores where the
// index spans more than one window; without, it splits Bleve's searchers.
//
//	go run ./examples/splitcost --index out/results/cacm.idx --data out/data/cacm
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/bits"
	"slices"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/internal/cpuclock"
	"github.com/semrank/semrank/rerank"
)

func main() {
	idxPath := flag.String("index", "", "index path")
	data := flag.String("data", "", "BEIR directory whose queries.jsonl is searched")
	size := flag.Int("size", 116, "hits a search asks for (a window of 100 and SearchTiesByID's slack)")
	reps := flag.Int("reps", 7, "searches of each query by each path, alternating")
	flag.BoolVar(&index.SumTerms, "sum", false, "score match queries term at a time (split where the index spans more than one window) rather than splitting Bleve's searchers")
	flag.Parse()
	if err := run(*idxPath, *data, *size, *reps); err != nil {
		log.Fatal(err)
	}
}

func run(idxPath, data string, size, reps int) error {
	if idxPath == "" || data == "" || size <= 0 || reps <= 0 {
		return errors.New("want --index, --data, a positive --size and --reps")
	}
	idx, err := index.OpenAny(idxPath)
	if err != nil {
		return err
	}
	defer idx.Close()
	qs, err := dataset.LoadQueries(data)
	if err != nil {
		return err
	}
	adv, err := idx.Advanced()
	if err != nil {
		return err
	}
	r, err := adv.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	// The first-stage query semrank run sends to this index.
	first, err := rerank.FirstStagePipeline(idx, size)
	if err != nil {
		return err
	}
	index.MinSplitPostings = 0
	ctx := context.Background()
	type bucket struct {
		n           int
		ratios, cpu float64 // sums of the queries' ratios
		bleve       time.Duration
	}
	buckets := map[int]*bucket{}
	fmt.Printf("%-12s %10s %12s %12s %7s\n", "query", "postings", "bleve ms", "split ms", "ratio")
	for _, q := range qs {
		bq, err := first.Query(q.FullText())
		if errors.Is(err, index.ErrEmptyQuery) {
			continue
		}
		if err != nil {
			return err
		}
		s, err := bq.Searcher(ctx, r, idx.Mapping(), search.SearcherOptions{})
		if err != nil {
			return err
		}
		postings := s.Count()
		s.Close()
		var a, b, ca, cb []time.Duration
		for range reps {
			req := bleve.NewSearchRequestOptions(bq, size, 0, false)
			t, c := time.Now(), cpuclock.Process()
			if _, err := idx.SearchInContext(ctx, req); err != nil {
				return err
			}
			a, ca = append(a, time.Since(t)), append(ca, cpuclock.Process()-c)
			t, c = time.Now(), cpuclock.Process()
			if _, err := index.Search(ctx, idx, req); err != nil {
				return err
			}
			b, cb = append(b, time.Since(t)), append(cb, cpuclock.Process()-c)
		}
		ma, mb := median(a), median(b)
		ratio := float64(mb) / float64(ma)
		fmt.Printf("%-12s %10d %12.3f %12.3f %7.3f\n", q.ID, postings, ms(ma), ms(mb), ratio)
		k := bits.Len64(postings)
		if buckets[k] == nil {
			buckets[k] = &bucket{}
		}
		buckets[k].n++
		buckets[k].ratios += ratio
		buckets[k].cpu += float64(median(cb)) / float64(max(1, median(ca)))
		buckets[k].bleve += ma
	}
	fmt.Printf("\n%-22s %7s %14s %11s %10s\n", "postings", "queries", "bleve ms mean", "mean ratio", "CPU ratio")
	keys := make([]int, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b := buckets[k]
		lo, hi := uint64(1)<<(k-1), uint64(1)<<k-1
		if k == 0 {
			lo, hi = 0, 0
		}
		fmt.Printf("%-22s %7d %14.3f %11.3f %10.3f\n", fmt.Sprintf("%d-%d", lo, hi), b.n, ms(b.bleve/time.Duration(b.n)), b.ratios/float64(b.n), b.cpu/float64(b.n))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// median returns the median of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}
