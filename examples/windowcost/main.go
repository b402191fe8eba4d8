// Command windowcost times, query by query and interleaved, what a
// reranked search costs beside a bare top-10 Bleve search: Bleve's
// search for 101 and for 116 hits (a window of 100 and the tie slack
// index.SearchTiesByID asks for), index.SearchTiesByID itself, the same
// 116 hits collected by a document-match handler of its own (compact
// entries, no per-hit field loading: whether leaving Bleve's collector
// would pay), and each pipeline given, through rerank.Wrap. It prints
// each one's median in CPU time (the process's CPU clock, which a busy
// machine inflates far less than wall time; run with GOMAXPROCS=1 so
// that it is the search's alone) and in wall time, their ratios to the
// bare search's, and each pipeline's stage times a window; --cpuprofile
// FILE writes a CPU profile of the timed searches (whose signals upset
// the CPU-time column: read the wall times of such a run).
//
//	GOMAXPROCS=1 go run ./examples/windowcost --index out/results/cacm.idx \
//	    --pipeline out/results/cost/empty.yaml --pipeline out/results/cost/tfidf.yaml \
//	    --data out/data/cacm --rounds 10
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/pprof"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/internal/cpuclock"
	"github.com/semrank/semrank/rerank"
	_ "github.com/semrank/semrank/rerank/stages"
)

// pipelines collects the repeated --pipeline flag.
type pipelines []string

func (p *pipelines) String() string     { return fmt.Sprint(*p) }
func (p *pipelines) Set(s string) error { *p = append(*p, s); return nil }

// system is one search timed: its name and the search of a query.
type system struct {
	name   string
	search func(q query.Query) error
}

func main() {
	var pipes pipelines
	idxPath := flag.String("index", "", "index path")
	data := flag.String("data", "", "BEIR directory whose queries.jsonl is searched")
	rounds := flag.Int("rounds", 10, "passes over the queries")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the timed searches to this file")
	flag.Var(&pipes, "pipeline", "pipeline file (repeatable)")
	flag.Parse()
	if err := run(*idxPath, *data, pipes, *rounds, *profile); err != nil {
		log.Fatal(err)
	}
}

func run(idxPath, data string, pipes []string, rounds int, profile string) error {
	if idxPath == "" || data == "" || len(pipes) == 0 || rounds <= 0 {
		return errors.New("want --index, --data, at least one --pipeline and a positive --rounds")
	}
	qs, err := dataset.LoadQueries(data)
	if err != nil {
		return err
	}
	idx, err := index.OpenAny(idxPath)
	if err != nil {
		return err
	}
	defer idx.Close()
	ctx := context.Background()
	bare := func(n int) func(query.Query) error {
		return func(q query.Query) error {
			_, err := idx.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, n, 0, false))
			return err
		}
	}
	systems := []system{
		{"bleve top-10", bare(10)},
		{"bleve top-101", bare(101)},
		{"bleve top-116", bare(116)},
		{"SearchTiesByID 100", func(q query.Query) error {
			_, err := index.SearchTiesByID(ctx, idx, bleve.NewSearchRequestOptions(q, 100, 0, false), 100)
			return err
		}},
		{"own collector 116", func(q query.Query) error {
			_, err := compactTop(ctx, idx, q, 116)
			return err
		}},
	}
	stageTimes := map[string][]time.Duration{}
	var stageMu sync.Mutex // guards stageTimes
	var first *rerank.Pipeline
	for _, path := range pipes {
		p, _, err := rerank.LoadPipeline(path, rerank.EnvOf(idx))
		if err != nil {
			return err
		}
		if first == nil {
			first = p
		}
		p.Observe = func(stage string, d time.Duration) {
			// A window's stages run, and report, concurrently.
			stageMu.Lock()
			stageTimes[path+" "+stage] = append(stageTimes[path+" "+stage], d)
			stageMu.Unlock()
		}
		w := rerank.Wrap(idx, p)
		systems = append(systems, system{path, func(q query.Query) error {
			_, err := w.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, 10, 0, false))
			return err
		}})
	}
	var bqs []query.Query
	for _, q := range qs {
		bq, err := first.Query(q.FullText())
		if errors.Is(err, index.ErrEmptyQuery) {
			continue
		}
		if err != nil {
			return fmt.Errorf("query %s: %w", q.ID, err)
		}
		bqs = append(bqs, bq)
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	cpu := make([][]time.Duration, len(systems))
	wall := make([][]time.Duration, len(systems))
	for range rounds {
		for _, q := range bqs {
			for i, s := range systems {
				c, w := cpuclock.Process(), time.Now()
				if err := s.search(q); err != nil {
					return fmt.Errorf("%s: %w", s.name, err)
				}
				cpu[i] = append(cpu[i], cpuclock.Process()-c)
				wall[i] = append(wall[i], time.Since(w))
			}
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	if median(cpu[0]) == 0 {
		// Seen while a CPU profile runs: the clock then moves in steps
		// coarser than a search.
		fmt.Println("the process's CPU clock did not move during most bare searches: wall times only")
	}
	for i, s := range systems {
		c, w := median(cpu[i]), median(wall[i])
		if c0 := median(cpu[0]); c0 > 0 {
			fmt.Printf("%-44s cpu %7.3f ms (%.3fx)  ", s.name, ms(c), float64(c)/float64(c0))
		} else {
			fmt.Printf("%-44s ", s.name)
		}
		fmt.Printf("wall %7.3f ms (%.3fx)\n", ms(w), float64(w)/float64(median(wall[0])))
	}
	names := make([]string, 0, len(stageTimes))
	for n := range stageTimes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Printf("stage %-50s median %.3f ms a window\n", n, ms(median(stageTimes[n])))
	}
	return nil
}

// median returns the median of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// entry is one hit a compact collector keeps.
type entry struct {
	score float64
	hit   uint64
	id    [8]byte
}

// worse reports whether a ranks below b in Bleve's order for a score
// sort: by score, then by hit number.
func worse(a, b entry) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.hit > b.hit
}

// compactTop returns the top k hits of q on idx, as Bleve ranks them,
// collected by a document-match handler of its own: a heap of compact
// entries, every DocumentMatch returned to Bleve's pool at once, and no
// field loading per hit; the hits' external ids are read at the end,
// while the search's reader is open.
func compactTop(ctx context.Context, idx bleve.Index, q query.Query, k int) ([]*search.DocumentMatch, error) {
	var out []*search.DocumentMatch
	maker := search.MakeDocumentMatchHandler(func(sc *search.SearchContext) (search.DocumentMatchHandler, bool, error) {
		h := make([]entry, 0, k)
		return func(d *search.DocumentMatch) error {
			if d == nil {
				slices.SortFunc(h, func(a, b entry) int {
					if worse(a, b) {
						return 1
					}
					return -1
				})
				out = make([]*search.DocumentMatch, len(h))
				for i, e := range h {
					dm := &search.DocumentMatch{Score: e.score, HitNumber: e.hit, IndexInternalID: append([]byte(nil), e.id[:]...)}
					id, err := sc.IndexReader.ExternalID(dm.IndexInternalID)
					if err != nil {
						return err
					}
					dm.ID, out[i] = id, dm
				}
				return nil
			}
			e := entry{score: d.Score, hit: d.HitNumber}
			copy(e.id[:], d.IndexInternalID)
			sc.DocumentMatchPool.Put(d)
			switch {
			case len(h) < k:
				h = append(h, e)
				for i := len(h) - 1; i > 0 && worse(h[i], h[(i-1)/2]); i = (i - 1) / 2 {
					h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
				}
			case worse(h[0], e):
				h[0] = e
				for i := 0; ; {
					m, l := i, 2*i+1
					if l < len(h) && worse(h[l], h[m]) {
						m = l
					}
					if r := l + 1; r < len(h) && worse(h[r], h[m]) {
						m = r
					}
					if m == i {
						break
					}
					h[i], h[m] = h[m], h[i]
					i = m
				}
			}
			return nil
		}, false, nil
	})
	req := bleve.NewSearchRequestOptions(q, 1, 0, false)
	if _, err := idx.SearchInContext(context.WithValue(ctx, search.MakeDocumentMatchHandlerKey, maker), req); err != nil {
		return nil, err
	}
	return out, nil
}
