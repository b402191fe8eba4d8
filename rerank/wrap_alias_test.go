package rerank_test

import (
	"fmt"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// TestAliasPagesOverTiedShards: an IndexAlias over wrapped children
// whose hits tie across children (rrf scores the hits at one place in
// each child's list alike) pages through one list: no hit twice, none
// left out. The alias merges its children's hits in the order they
// arrive, which varies, so the pages are asked for several times.
func TestAliasPagesOverTiedShards(t *testing.T) {
	a, b := shards(docs("d", 40))
	for _, tc := range []struct {
		name   string
		fusion rerank.Fusion
	}{
		{"rrf", &rerank.RRF{}},
		{"linear", &rerank.Linear{Weights: map[string]float64{"short": 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &rerank.Pipeline{Window: 10, Stages: []rerank.Stage{lengthStage{}}, Fusion: tc.fusion}
			alias := bleve.NewIndexAlias(rerank.Wrap(newIndex(t, a), p), rerank.Wrap(newIndex(t, b), p))
			full, err := alias.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 40, 0, false))
			if err != nil {
				t.Fatal(err)
			}
			for round := 0; round < 10 && !t.Failed(); round++ {
				for _, size := range []int{1, 3, 4} {
					var paged []string
					for from := 0; from < 40; from += size {
						res, err := alias.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), size, from, false))
						if err != nil {
							t.Fatal(err)
						}
						paged = append(paged, ids(res.Hits)...)
					}
					if fmt.Sprint(paged) != fmt.Sprint(ids(full.Hits)) {
						t.Errorf("pages of %d: %v\n  != the list %v", size, paged, ids(full.Hits))
					}
				}
			}
		})
	}
}

// shards deals ds into two halves, alternately: the two children of an
// IndexAlias whose hits interleave.
func shards(ds []dataset.Doc) (a, b []dataset.Doc) {
	for i, d := range ds {
		if i%2 == 0 {
			a = append(a, d)
		} else {
			b = append(b, d)
		}
	}
	return a, b
}
