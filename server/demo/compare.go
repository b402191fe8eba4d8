package demo

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/offline"
)

// Metrics are the measures Compare reports.
var Metrics = eval.MustParseMetrics("map@10,mrr@10,p@1")

// Comparison is the first stage against the pipeline on the held-out
// queries, candidates retrieved from the whole corpus.
type Comparison struct {
	Queries         int
	First, Reranked eval.Result
	FirstRun        dataset.Run
	RerankedRun     dataset.Run
}

// Compare reranks the held-out queries with the demo pipeline.
func (d *Demo) Compare(ctx context.Context) (*Comparison, error) {
	p, _, err := rerank.LoadPipeline(d.PipelinePath, rerank.EnvFor(d.Index))
	if err != nil {
		return nil, err
	}
	test := retrieval(d.Dataset.Subset(dataset.InSet(d.Test)))
	first, reranked, err := offline.RunDataset(ctx, d.Index, test, p, 0, nil)
	if err != nil {
		return nil, err
	}
	c := &Comparison{Queries: len(test.Qrels), FirstRun: first, RerankedRun: reranked}
	if c.First, err = eval.Evaluate(test.Qrels, first, Metrics); err != nil {
		return nil, err
	}
	if c.Reranked, err = eval.Evaluate(test.Qrels, reranked, Metrics); err != nil {
		return nil, err
	}
	return c, nil
}

// Print writes the metrics and, for up to n held-out queries, the top k of
// both lists side by side, marking judged-relevant documents.
func (d *Demo) Print(w io.Writer, c *Comparison, n, k int) {
	fmt.Fprintf(w, "Held-out queries (%d), candidates retrieved from all %d documents, window %d:\n\n", c.Queries, len(d.Dataset.Corpus), Window)
	rows := []struct {
		name string
		r    eval.Result
	}{{"first stage (Bleve BM25)", c.First}, {"reranked (" + strings.Join(d.Stages, "+") + ")", c.Reranked}}
	width := 0
	for _, row := range rows {
		width = max(width, len(row.name))
	}
	fmt.Fprintf(w, "  %-*s", width, "")
	for _, m := range Metrics {
		fmt.Fprintf(w, "%10s", m)
	}
	fmt.Fprintln(w)
	for _, row := range rows {
		fmt.Fprintf(w, "  %-*s", width, row.name)
		for _, m := range Metrics {
			fmt.Fprintf(w, "%10.4f", row.r.Value(m.String()))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n✓ judged relevant, · judged not relevant, blank: not judged\n")
	shown := 0
	for _, qid := range d.Test {
		if shown == n {
			break
		}
		first, reranked := c.FirstRun.Ranking(qid), c.RerankedRun.Ranking(qid)
		if len(first) == 0 {
			continue
		}
		shown++
		q, _ := d.Dataset.Query(qid)
		fmt.Fprintf(w, "\n%s: %s\n", qid, clip(q.FullText(), 100))
		fmt.Fprintf(w, "   %-48s %s\n", "first stage", "reranked")
		firstRank := map[string]int{}
		for i, e := range first {
			firstRank[e.DocID] = i + 1
		}
		for i := range min(k, len(first)) {
			fmt.Fprintf(w, "%2d %s  %-46s", i+1, d.mark(qid, first[i].DocID), clip(d.title(first[i].DocID), 44))
			if i < len(reranked) {
				id := reranked[i].DocID
				fmt.Fprintf(w, " %s %s  %s", move(firstRank[id], i+1), d.mark(qid, id), clip(d.title(id), 44))
			}
			fmt.Fprintln(w)
		}
	}
}

func (d *Demo) mark(qid, docID string) string {
	g, ok := d.Dataset.Qrels[qid][docID]
	switch {
	case !ok:
		return " "
	case g > 0:
		return "✓"
	}
	return "·"
}

func (d *Demo) title(id string) string {
	doc, _ := d.Dataset.Doc(id)
	if doc.Title != "" {
		return doc.Title
	}
	return doc.Text
}

// move marks how far a document moved from its first-stage rank.
func move(from, to int) string {
	switch {
	case from > to:
		return fmt.Sprintf("▲%-3d", from-to)
	case from < to:
		return fmt.Sprintf("▼%-3d", to-from)
	}
	return " =  "
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
