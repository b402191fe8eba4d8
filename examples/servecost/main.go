// Command servecost measures what serving an index costs: the time to
// open it, the heap it holds once open, and the time per query for the
// titles of the corpus's first documents, searched bare or reranked by a
// pipeline. Run it under /usr/bin/time for the process's peak RSS.
// scripts/results.sh serve makes docs/RESULTS.md's table of issue 27 with
// it. It prints one line: open ms, heap MiB once open, ms per query.
//
//	go run ./examples/servecost --index IDX --corpus corpus.jsonl [--pipeline P.yaml | --plain]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
	_ "github.com/semrank/semrank/rerank/stages" // the stage types pipelines name
)

func main() {
	path := flag.String("index", "", "index to open")
	corpus := flag.String("corpus", "", "BEIR corpus.jsonl whose titles are the queries")
	pipeline := flag.String("pipeline", "", "pipeline file: rerank each query's hits with it")
	plain := flag.Bool("plain", false, "open a plain Bleve index (examples/plainindex) with bleve.Open")
	n := flag.Int("queries", 200, "queries to run")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the queries to this file")
	maps := flag.Bool("maps", false, "after the queries, print to stderr the resident memory of each mapped file and of the anonymous memory (Linux: /proc/self/smaps)")
	flag.Parse()
	if *path == "" || *corpus == "" || *plain && *pipeline != "" {
		flag.Usage()
		os.Exit(2)
	}
	queries, err := titles(*corpus, *n)
	if err != nil {
		log.Fatal(err)
	}
	heap0 := heap()
	start := time.Now()
	var idx bleve.Index
	if *plain {
		idx, err = bleve.Open(*path)
	} else {
		idx, err = index.Open(*path)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer idx.Close()
	opened := time.Since(start)
	heapOpen := heap() - heap0
	toQuery := func(text string) (query.Query, error) { return bleve.NewMatchQuery(text), nil }
	if !*plain {
		toQuery = index.TextQuery
	}
	if *pipeline != "" {
		p, _, err := rerank.LoadPipeline(*pipeline, rerank.EnvOf(idx))
		if err != nil {
			log.Fatal(err)
		}
		idx, toQuery = rerank.Wrap(idx, p), p.Query
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	start = time.Now()
	for _, text := range queries {
		q, err := toQuery(text)
		if err != nil {
			log.Fatal(err)
		}
		if _, err := idx.Search(bleve.NewSearchRequestOptions(q, 10, 0, false)); err != nil {
			log.Fatal(err)
		}
	}
	perQuery := time.Since(start) / time.Duration(max(len(queries), 1))
	if *maps {
		if err := printMaps(os.Stderr); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("%.1f %.1f %.2f\n", float64(opened.Microseconds())/1000, float64(heapOpen)/(1<<20), float64(perQuery.Microseconds())/1000)
}

// heap returns the bytes the heap holds after a collection.
func heap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// titles returns the titles of the first n records of a BEIR corpus.
func titles(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() && len(out) < n {
		var r struct {
			Title string `json:"title"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, err
		}
		if r.Title != "" {
			out = append(out, r.Title)
		}
	}
	return out, sc.Err()
}

// printMaps writes the process's resident memory by what backs it, from
// /proc/self/smaps: each mapped file's resident KiB (summed over its
// mappings), then the anonymous memory's (the heap, stacks, the runtime's
// own), largest first.
func printMaps(w io.Writer) error {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return err
	}
	defer f.Close()
	rss := map[string]int64{}
	name := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			name = "[anonymous]"
			if len(fields) >= 6 {
				name = strings.Join(fields[5:], " ")
			}
		case len(fields) == 3 && fields[0] == "Rss:":
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return fmt.Errorf("smaps: %q: %w", sc.Text(), err)
			}
			rss[name] += kb
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	names := make([]string, 0, len(rss))
	var total int64
	for n, kb := range rss {
		names = append(names, n)
		total += kb
	}
	sort.Slice(names, func(i, j int) bool { return rss[names[i]] > rss[names[j]] })
	fmt.Fprintf(w, "%8d KiB resident in all\n", total)
	for _, n := range names {
		if rss[n] > 0 {
			fmt.Fprintf(w, "%8d KiB %s\n", rss[n], n)
		}
	}
	return nil
}
