package stages

import (
	"context"
	"math"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
)

// TestScoresDeterministic scores the same candidates again and again and
// wants the same bits every time. A sum taken while ranging over a Go map
// adds in a different order on each loop and can round differently; fusion
// trained on such scores, and rankings with near ties, would then change
// from run to run.
func TestScoresDeterministic(t *testing.T) {
	ds, err := dataset.Load("../../testdata/concepts/semeval-b")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, d := range ds.Corpus {
		texts = append(texts, d.FullText())
	}
	env := rerank.Env{Stats: tweak.CountDF(texts)}
	for _, spec := range []rerank.StageSpec{
		{Type: "tfidf"}, {Type: "bm25"}, {Type: "rm3"}, {Type: "overlap"}, {Type: "length"},
	} {
		t.Run(spec.Type, func(t *testing.T) {
			st, err := rerank.NewStage(spec, env)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range ds.Queries[:min(5, len(ds.Queries))] {
				var cands []rerank.Candidate
				for i, e := range ds.Candidates.Ranking(q.ID) {
					d, _ := ds.Doc(e.DocID)
					cands = append(cands, rerank.Candidate{Doc: dataset.Doc{ID: d.ID, Title: d.Title, Text: d.Text}, Rank: i + 1})
				}
				rq := rerank.Query{ID: q.ID, Text: q.FullText()}
				first, err := st.Score(context.Background(), rq, cands)
				if err != nil {
					t.Fatal(err)
				}
				for range 30 {
					again, err := st.Score(context.Background(), rq, cands)
					if err != nil {
						t.Fatal(err)
					}
					for i := range first {
						if math.Float64bits(first[i]) != math.Float64bits(again[i]) {
							t.Fatalf("query %s candidate %s: %v, then %v", q.ID, cands[i].ID, first[i], again[i])
						}
					}
				}
			}
		})
	}
}
