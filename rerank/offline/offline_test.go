package offline

import (
	"context"
	"fmt"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
	_ "github.com/semrank/semrank/rerank/stages"
)

// TestExamplesKeepTheWindow: fusion training sees what reranking sees.
// Rerank fuses only the first window candidates of a given list, with
// features normalised over those; examples over the whole list would
// train the fusion on other candidates and other scales.
func TestExamplesKeepTheWindow(t *testing.T) {
	ctx := context.Background()
	ds := &dataset.Dataset{Qrels: dataset.Qrels{"q1": {"d1": 1}}, Queries: []dataset.Query{{ID: "q1", Text: "bank account"}}}
	given := dataset.NewRun()
	for i := 1; i <= 5; i++ {
		id := fmt.Sprintf("d%d", i)
		ds.Corpus = append(ds.Corpus, dataset.Doc{ID: id, Text: "bank account number " + id})
		given.Add("q1", dataset.Entry{DocID: id, Rank: i, Score: float64(10 - i)})
	}
	ds.Candidates = &given
	idx, err := index.Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if err := idx.Add(ctx, ds.Corpus, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, window := range []int{2, 5, 8} {
		cfg := &rerank.Config{Window: window, Stages: []rerank.StageSpec{{Type: "length"}}, Fusion: rerank.FusionSpec{Method: "none"}}
		p, err := cfg.Build(rerank.EnvFor(idx))
		if err != nil {
			t.Fatal(err)
		}
		exs, err := Examples(ctx, idx, ds, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(exs) != 1 {
			t.Fatalf("window %d: %d examples, want 1", window, len(exs))
		}
		if got, want := len(exs[0].Input.Candidates), min(window, 5); got != want || len(exs[0].Labels) != want {
			t.Errorf("window %d: %d candidates and %d labels, want %d", window, got, len(exs[0].Labels), want)
		}
	}
}
