package translation

import (
	"context"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// BenchmarkScore scores the SemEval A slice's queries against their ten
// comments with a model trained on the slice's good pairs. β = 0 (word
// match only, the query-likelihood model) is timed in the same run as the
// baseline: the ratio is the cost of the translation table.
func BenchmarkScore(b *testing.B) {
	ds, err := dataset.Load("../../testdata/deepmatch/semeval-a")
	if err != nil {
		b.Fatal(err)
	}
	type list struct {
		query string
		cands []string
	}
	var lists []list
	var pairs []Pair
	for _, q := range ds.Queries {
		l := list{query: q.FullText()}
		for _, e := range ds.Candidates.Ranking(q.ID) {
			d, _ := ds.Doc(e.DocID)
			l.cands = append(l.cands, d.FullText())
			if ds.Qrels[q.ID][e.DocID] > 0 {
				pairs = append(pairs, Pair{l.query, d.FullText()})
			}
		}
		lists = append(lists, l)
	}
	m, err := Train(context.Background(), pairs, nil, DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	wordsOnly := *m
	wordsOnly.Config.Beta = 0
	for _, bm := range []struct {
		name string
		m    *Model
	}{{"words", &wordsOnly}, {"translation", m}} {
		b.Run(bm.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				l := lists[i%len(lists)]
				bm.m.Score(l.query, l.cands)
				i++
			}
		})
	}
}
