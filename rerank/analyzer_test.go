package rerank_test

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// TestAnalyzerOverPlainIndex reranks an index a Bleve application built
// (the standard analyzer) with fields.analyzer: semrank_en, and checks
// that before term counts are attached the stages fail saying so, and
// that once they are, every lexical stage scores each candidate as it
// does over a semrank index of the same documents, whose own analyzer
// and statistics those are. (rm3, which weighs the top candidates by
// their first-stage scores, differs with the first stage, and is left
// out.)
func TestAnalyzerOverPlainIndex(t *testing.T) {
	ctx := context.Background()
	ds, err := dataset.Load("../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	ds.Candidates = nil
	const stages = "stages: [{type: tfidf}, {type: bm25}, {type: overlap}, {type: length}]\n"
	build := func(idx rerank.Env, yaml string) *rerank.Pipeline {
		t.Helper()
		cfg, err := rerank.ParseConfig([]byte("window: 40\n" + yaml + stages))
		if err != nil {
			t.Fatal(err)
		}
		p, err := cfg.Build(idx)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	own, err := index.Create(filepath.Join(t.TempDir(), "semrank"))
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if err := own.Add(ctx, ds.Corpus, []index.PayloadEncoder{index.TermsEncoder{}}, nil); err != nil {
		t.Fatal(err)
	}
	want := build(rerank.EnvFor(own), "")

	path := filepath.Join(t.TempDir(), "plain")
	a, err := index.NewAttached(plainIndexAt(t, ds, path), path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	p := build(rerank.EnvOf(a), "fields: {title: subject, text: [body], analyzer: semrank_en}\n")
	q := rerank.Query{ID: ds.Queries[0].ID, Text: ds.Queries[0].FullText()}
	ids := make([]string, 0, len(ds.Corpus))
	for _, d := range ds.Corpus {
		ids = append(ids, d.ID)
	}
	ids = ids[:min(len(ids), 40)]
	_, err = rerank.Searcher{Index: a, Pipeline: p}.Given(ctx, q, nil, ids)
	if err == nil || !strings.Contains(err.Error(), "semrank_en") || !strings.Contains(err.Error(), "attached") {
		t.Fatalf("before attaching: err = %v, want one saying no term counts of semrank_en are attached", err)
	}
	if _, err := rerank.Attach(ctx, a, p, nil); err != nil {
		t.Fatal(err)
	}
	p = build(rerank.EnvOf(a), "fields: {title: subject, text: [body], analyzer: semrank_en}\n")

	for _, dq := range ds.Queries {
		q := rerank.Query{ID: dq.ID, Text: dq.FullText()}
		got, err := rerank.Searcher{Index: a, Pipeline: p}.Given(ctx, q, nil, ids)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := rerank.Searcher{Index: own, Pipeline: want}.Given(ctx, q, nil, ids)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string][]float64{}
		for _, s := range ref {
			byID[s.ID] = s.StageScores
		}
		if len(got) != len(ref) {
			t.Fatalf("query %s: %d candidates scored, want %d", dq.ID, len(got), len(ref))
		}
		for _, s := range got {
			for i, v := range s.StageScores {
				if w := byID[s.ID][i]; math.Abs(v-w) > 1e-12 {
					t.Fatalf("query %s, %s, stage %s: %v over the plain index, %v over a semrank index", dq.ID, s.ID, p.StageNames()[i], v, w)
				}
			}
		}
	}
}

// TestAnalyzerUnknown: a pipeline naming an analyzer no registry holds is
// refused when built, naming it.
func TestAnalyzerUnknown(t *testing.T) {
	ds, err := dataset.Load("../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	idx := plainIndex(t, ds)
	cfg, err := rerank.ParseConfig([]byte("fields: {title: subject, text: body, analyzer: klingon}\nstages: [{type: tfidf}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Build(rerank.EnvOf(idx)); err == nil || !strings.Contains(err.Error(), "klingon") {
		t.Fatalf("err = %v, want one naming the analyzer", err)
	}
}
