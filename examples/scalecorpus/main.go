// Command scalecorpus writes a BEIR corpus of any number of short forum
// documents, recombined from the SemEval-2016 Task 3 Qatar Living threads
// (questions and comments), for measuring indexing and serving at 10k,
// 100k or 1M documents (issue 27). The same flags write the same bytes.
//
// Each document takes the subject of a question as its title and, as its
// text, sentences drawn from the whole pool of question bodies and
// comments until title and text hold about --bytes bytes (a sentence
// longer than that is cut at a word), chosen by a PCG generator seeded
// with --seed. The pool is read in the order the files are given, so the
// documents are real forum text, but none is a real post.
//
//	go run ./examples/scalecorpus --xml ../shared/data/semeval2016-task3/SemEval2016-Task3-CQA-QL-train-part2.xml \
//		--docs 100000 --out out/scale/100k
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index/convert"
)

type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(s string) error { *f = append(*f, s); return nil }

func main() {
	var xml files
	flag.Var(&xml, "xml", "SemEval-2016 Task 3 XML file (repeatable)")
	n := flag.Int("docs", 10000, "number of documents")
	size := flag.Int("bytes", 200, "bytes of title and text per document, about")
	seed := flag.Uint64("seed", 27, "seed of the generator")
	out := flag.String("out", "", "BEIR directory to write (its corpus.jsonl)")
	flag.Parse()
	if len(xml) == 0 || *out == "" || *n <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	titles, sentences, err := pool(xml)
	if err != nil {
		log.Fatal(err)
	}
	if err := write(*out, *n, *size, *seed, titles, sentences); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("wrote %s: %d documents from %d titles and %d sentences\n", *out, *n, len(titles), len(sentences))
}

// pool reads the titles (question subjects) and sentences (of question
// bodies and comments) of the files' subtask A collections, in order,
// each distinct text once.
func pool(paths []string) (titles, sentences []string, err error) {
	c := convert.NewSemEval(convert.SubtaskA)
	for _, p := range paths {
		if err := c.AddFile(p); err != nil {
			return nil, nil, err
		}
	}
	ds := c.Dataset()
	seen := map[string]bool{}
	add := func(list *[]string, s string) {
		s = strings.Join(strings.Fields(s), " ")
		if len(s) >= 3 && !seen[s] {
			seen[s] = true
			*list = append(*list, s)
		}
	}
	for _, q := range ds.Queries {
		add(&titles, q.Title)
		for _, s := range split(q.Text) {
			add(&sentences, s)
		}
	}
	for _, d := range ds.Corpus {
		for _, s := range split(d.Text) {
			add(&sentences, s)
		}
	}
	if len(titles) == 0 || len(sentences) == 0 {
		return nil, nil, fmt.Errorf("no text in %s", strings.Join(paths, ", "))
	}
	return titles, sentences, nil
}

// split cuts text into sentences after '.', '!' or '?' followed by a
// space, and at line ends.
func split(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		start := 0
		for i := 0; i+1 < len(line); i++ {
			if strings.IndexByte(".!?", line[i]) >= 0 && line[i+1] == ' ' {
				out = append(out, line[start:i+1])
				start = i + 2
			}
		}
		out = append(out, line[start:])
	}
	return out
}

// write writes n documents to dir/corpus.jsonl, through a temporary file
// renamed into place once whole.
func write(dir string, n, size int, seed uint64, titles, sentences []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "corpus.jsonl")
	f, err := os.Create(path + ".part")
	if err != nil {
		return err
	}
	defer os.Remove(path + ".part")
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	rng := rand.New(rand.NewPCG(seed, 0))
	for i := range n {
		d := dataset.Doc{ID: fmt.Sprintf("s%07d", i), Title: titles[rng.IntN(len(titles))]}
		var text strings.Builder
		for len(d.Title)+text.Len() < size {
			if text.Len() > 0 {
				text.WriteByte(' ')
			}
			text.WriteString(cut(sentences[rng.IntN(len(sentences))], size-len(d.Title)-text.Len()))
		}
		d.Text = text.String()
		if err := enc.Encode(d); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".part", path)
}

// cut returns s, or its words that fit in max bytes (at least its first
// word) when s is longer.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if i := strings.LastIndexByte(s[:max+1], ' '); i > 0 {
		return s[:i]
	}
	if i := strings.IndexByte(s, ' '); i > 0 {
		return s[:i]
	}
	return s
}
