package rerank_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// titleWords scores a candidate by how many of the query's words (of at
// least minLen letters) its title holds.
type titleWords struct{ minLen int }

func (titleWords) Name() string { return "title_words" }

func (s titleWords) Score(_ context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	out := make([]float64, len(cands))
	for i, c := range cands {
		title := strings.Fields(strings.ToLower(c.Title))
		for _, w := range strings.Fields(strings.ToLower(q.Text)) {
			for _, t := range title {
				if len(w) >= s.minLen && w == t {
					out[i]++
					break
				}
			}
		}
	}
	return out, nil
}

// A stage of one's own: register its type (from an init function in a
// real program), read its options through the spec, and name it in a
// pipeline file beside the built-in stages, with fusion weights by stage
// name.
func ExampleRegisterStage() {
	rerank.RegisterStage("title_words", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		o := struct {
			MinLen int `yaml:"min_len"`
		}{MinLen: 1} // options no field names are refused
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		return titleWords{minLen: o.MinLen}, nil
	})

	cfg, err := rerank.ParseConfig([]byte(`
stages:
  - type: overlap
  - type: title_words
    name: title
    options: {min_len: 3}
fusion:
  method: linear
  weights: {first_rank: 1, overlap: 1, title: 2}
`))
	if err != nil {
		log.Fatal(err)
	}
	p, err := cfg.Build(rerank.Env{}) // overlap and title_words need no index
	if err != nil {
		log.Fatal(err)
	}
	cands := []rerank.Candidate{ // first-stage order
		{Doc: dataset.Doc{ID: "d1", Title: "Car loans", Text: "Which bank gives car loans in Doha?"}, Rank: 1},
		{Doc: dataset.Doc{ID: "d2", Title: "Opening a bank account", Text: "Documents for a salary account."}, Rank: 2},
		{Doc: dataset.Doc{ID: "d3", Title: "Bank account for expats", Text: "Which bank is best for an expat account?"}, Rank: 3},
	}
	scored, err := p.Rerank(context.Background(), rerank.Query{Text: "bank account for expats"}, cands)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.StageNames())
	for _, s := range scored {
		fmt.Println(s.ID, s.StageScores)
	}

	// A misspelt option is an error, not a setting silently ignored.
	cfg.Stages[1].Options = map[string]any{"minlen": 3}
	_, err = cfg.Build(rerank.Env{})
	fmt.Println(err)
	// Output:
	// [overlap title]
	// d3 [1 4]
	// d2 [0.6666666666666666 2]
	// d1 [0.3333333333333333 0]
	// rerank: stage "title" (type title_words): unknown option minlen (accepted: min_len)
}
