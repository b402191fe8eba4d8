// Command plainindex builds the kind of index a Bleve application already
// has: bleve.NewIndexMapping(), its own field names, its own analyzers,
// built with no semrank code at all. It reads a BEIR corpus.jsonl and
// indexes each record as
//
//	{"title": …, "abstract": text, "authors": metadata.authors}
//
// semrank then searches and reranks it as it is (semrank run --index,
// a pipeline's fields: key), which is how docs/RESULTS.md measures
// reranking over an index semrank did not build.
//
//	go run ./examples/plainindex --corpus DIR/corpus.jsonl --index PLAIN.idx
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/blevesearch/bleve/v2"
)

type record struct {
	ID       string `json:"_id"`
	Title    string `json:"title"`
	Text     string `json:"text"`
	Metadata struct {
		Authors []string `json:"authors"`
	} `json:"metadata"`
}

func main() {
	corpus := flag.String("corpus", "", "BEIR corpus.jsonl")
	path := flag.String("index", "", "index to create (must not exist)")
	flag.Parse()
	if *corpus == "" || *path == "" {
		flag.Usage()
		os.Exit(2)
	}
	n, err := build(*corpus, *path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("indexed %d documents into %s\n", n, *path)
}

func build(corpus, path string) (int, error) {
	f, err := os.Open(corpus)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	idx, err := bleve.New(path, bleve.NewIndexMapping())
	if err != nil {
		return 0, err
	}
	defer idx.Close()
	batch := idx.NewBatch()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return n, fmt.Errorf("%s line %d: %w", corpus, n+1, err)
		}
		doc := map[string]any{"title": r.Title, "abstract": r.Text}
		if len(r.Metadata.Authors) > 0 {
			doc["authors"] = r.Metadata.Authors
		}
		if err := batch.Index(r.ID, doc); err != nil {
			return n, err
		}
		n++
		if batch.Size() >= 1000 {
			if err := idx.Batch(batch); err != nil {
				return n, err
			}
			batch = idx.NewBatch()
		}
	}
	if err := sc.Err(); err != nil {
		return n, err
	}
	return n, idx.Batch(batch)
}
