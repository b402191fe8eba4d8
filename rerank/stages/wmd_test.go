package stages

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/models/ssg/ssgtest"
	"github.com/semrank/semrank/rerank"
)

// wmdFixture writes the ssgtest vectors and topic model into dir.
func wmdFixture(t *testing.T, dir string) {
	v, tm := ssgtest.Fixture(t)
	if err := v.Save(filepath.Join(dir, "vec.model"), embed.Config{Dim: 2}); err != nil {
		t.Fatal(err)
	}
	if err := tm.Save(filepath.Join(dir, "topics.model")); err != nil {
		t.Fatal(err)
	}
	coll := &dataset.Dataset{
		Corpus:  []dataset.Doc{{ID: "c1", Text: "loan account"}, {ID: "c2", Text: "sand camping"}},
		Queries: []dataset.Query{{ID: "q1", Text: "salary bank"}},
	}
	if err := coll.Save(filepath.Join(dir, "coll")); err != nil {
		t.Fatal(err)
	}
}

func TestWMDAndSSGStages(t *testing.T) {
	dir := t.TempDir()
	wmdFixture(t, dir)
	cands := []rerank.Candidate{
		{Doc: dataset.Doc{ID: "far", Text: "beach desert camping"}},
		{Doc: dataset.Doc{ID: "near", Title: "Bank", Text: "loan salary"}},
		{Doc: dataset.Doc{ID: "empty", Text: "the of and"}},
	}
	specs := []rerank.StageSpec{
		{Type: "wmd", Model: "vec.model"},
		{Type: "ssg", Model: "vec.model", Options: map[string]any{"topics": "topics.model", "k": 2}},
		{Type: "ssg", Model: "vec.model", Options: map[string]any{"topics": "topics.model", "dropout": 0.5}},
		{Type: "ssg", Model: "vec.model", Options: map[string]any{"topics": "topics.model", "collection": "coll"}},
	}
	for _, spec := range specs {
		st, err := rerank.NewStage(spec, rerank.Env{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		s, err := st.Score(context.Background(), rerank.Query{Text: "bank loan"}, cands)
		if err != nil {
			t.Fatal(err)
		}
		if !(s[1] > s[0] && s[0] > s[2]) {
			t.Errorf("%s %v: scores %v, want near > far > empty", spec.Type, spec.Options, s)
		}
		tied, err := st.Score(context.Background(), rerank.Query{Text: "the"}, cands)
		if err != nil || tied[0] != 0 || tied[1] != 0 {
			t.Errorf("%s: query without vectors: %v, %v", spec.Type, tied, err)
		}
	}
}

func TestWMDStagesRejectBadSpecs(t *testing.T) {
	dir := t.TempDir()
	wmdFixture(t, dir)
	for _, spec := range []rerank.StageSpec{
		{Type: "wmd"},
		{Type: "wmd", Model: "missing.model"},
		{Type: "ssg", Model: "vec.model"},
		{Type: "ssg", Model: "vec.model", Options: map[string]any{"topics": "vec.model"}},
		{Type: "ssg", Model: "vec.model", Options: map[string]any{"topics": "topics.model", "dropout": 1.5}},
		{Type: "ssg", Model: "vec.model", Options: map[string]any{"topics": "topics.model", "collection": "missing"}},
	} {
		if _, err := rerank.NewStage(spec, rerank.Env{Dir: dir}); err == nil {
			t.Errorf("%+v accepted", spec)
		}
	}
}

// TestWMDAndSSGShareVectors: stages of one pipeline naming the same
// vectors load them once, and with the query's distances shared in a
// window both score as each does alone.
func TestWMDAndSSGShareVectors(t *testing.T) {
	dir := t.TempDir()
	wmdFixture(t, dir)
	specs := []rerank.StageSpec{
		{Type: "wmd", Model: "vec.model"},
		{Type: "ssg", Model: "vec.model", Options: map[string]any{"topics": "topics.model", "k": 2}},
	}
	p, err := (&rerank.Config{Stages: specs}).Build(rerank.Env{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w, s := p.Stages[0].(*WMD), p.Stages[1].(*SSG)
	if w.Space != s.Model.Space {
		t.Error("wmd and ssg over the same vectors hold two copies")
	}
	cands := []rerank.Candidate{
		{Doc: dataset.Doc{ID: "far", Text: "beach desert camping"}},
		{Doc: dataset.Doc{ID: "near", Title: "Bank", Text: "loan salary"}},
		{Doc: dataset.Doc{ID: "empty", Text: "the of and"}},
	}
	q := rerank.Query{Text: "bank loan"}
	together, err := p.ScoreStages(context.Background(), q, cands)
	if err != nil {
		t.Fatal(err)
	}
	for i, spec := range specs {
		st, err := rerank.NewStage(spec, rerank.Env{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		alone, err := st.Score(context.Background(), q, cands)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(alone, together[i]) {
			t.Errorf("%s: %v in the pipeline, %v alone", spec.Type, together[i], alone)
		}
	}
}

// TestWordSpace: the word vectors of a wmd or an ssg stage load alone, an
// ssg stage's topic model and neighbour lists unread (here absent); other
// stages and bad options are refused.
func TestWordSpace(t *testing.T) {
	env := rerank.Env{Dir: "../../testdata/embed"}
	for _, tc := range []struct {
		name string
		spec rerank.StageSpec
		want string // error substring; "" for success
	}{
		{"wmd", rerank.StageSpec{Type: "wmd", Model: "glove-slice.txt"}, ""},
		{"ssg", rerank.StageSpec{Type: "ssg", Model: "glove-slice.txt", Options: map[string]any{"topics": "none.topics", "neighbours": "none.lists"}}, ""},
		{"tfidf", rerank.StageSpec{Type: "tfidf"}, "reads no word vectors"},
		{"unknown option", rerank.StageSpec{Type: "ssg", Model: "glove-slice.txt", Options: map[string]any{"topic": "x"}}, "topic"},
		{"no model", rerank.StageSpec{Type: "wmd"}, "word vectors"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			space, err := WordSpace(tc.spec, env)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one naming %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if space.Vectors().Len() == 0 {
				t.Fatal("no vectors")
			}
		})
	}
}

// TestWMDPayloads: over an index holding the candidates' nBOW payloads the
// wmd stage reads no stored document and ranks and scores as over the
// same documents without them, on real questions; a document added
// without a payload is read from its text; payloads written in other
// vectors are refused.
func TestWMDPayloads(t *testing.T) {
	texts := unsupText(t)
	var docs []dataset.Doc
	for i, text := range texts[:300] {
		docs = append(docs, dataset.Doc{ID: fmt.Sprintf("d%03d", i), Text: text})
	}
	cfg := &rerank.Config{Window: 40, Stages: []rerank.StageSpec{{Type: "wmd", Model: "glove-slice.txt"}}}
	build := func(withPayloads bool) (*index.Index, *rerank.Pipeline) {
		idx, err := index.Create("")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { idx.Close() })
		env := rerank.EnvOf(idx)
		env.Dir = "../../testdata/embed"
		p, err := cfg.Build(env)
		if err != nil {
			t.Fatal(err)
		}
		var encs []index.PayloadEncoder
		if withPayloads {
			encs = p.Encoders()
		}
		if err := idx.Add(context.Background(), docs, encs, nil); err != nil {
			t.Fatal(err)
		}
		return idx, p
	}
	stored, sp := build(true)
	plain, pp := build(false)
	ctx := context.Background()
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	for _, tc := range []struct {
		p    *rerank.Pipeline
		want bool
	}{{sp, false}, {pp, true}} {
		reads := make([]bool, len(ids))
		if err := tc.p.Stages[0].(*WMD).ReadsDocs(ctx, ids, reads); err != nil {
			t.Fatal(err)
		}
		for i, r := range reads {
			if r != tc.want {
				t.Fatalf("document %s read: %v, want %v", ids[i], r, tc.want)
			}
		}
	}
	for _, q := range texts[300:320] {
		req := func() *bleve.SearchRequest {
			return bleve.NewSearchRequestOptions(bleve.NewMatchQuery(q), 10, 0, false)
		}
		a, err := rerank.Wrap(stored, sp).Search(req())
		if err != nil {
			t.Fatal(err)
		}
		b, err := rerank.Wrap(plain, pp).Search(req())
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Hits) == 0 || len(a.Hits) != len(b.Hits) {
			t.Fatalf("%q: %d hits from payloads, %d from text", q, len(a.Hits), len(b.Hits))
		}
		for i := range a.Hits {
			if a.Hits[i].ID != b.Hits[i].ID || a.Hits[i].Score != b.Hits[i].Score {
				t.Fatalf("%q: hit %d %s %v from payloads, %s %v from text", q, i, a.Hits[i].ID, a.Hits[i].Score, b.Hits[i].ID, b.Hits[i].Score)
			}
		}
	}
	// A document added without its payload is read.
	if err := stored.Add(ctx, []dataset.Doc{{ID: "late", Text: texts[0]}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	reads := make([]bool, 2)
	if err := sp.Stages[0].(*WMD).ReadsDocs(ctx, []string{"d000", "late"}, reads); err != nil || reads[0] || !reads[1] {
		t.Errorf("reads %v (%v), want the late document's alone", reads, err)
	}
	// Other vectors.
	dir := t.TempDir()
	wmdFixture(t, dir)
	env := rerank.EnvOf(stored)
	env.Dir = dir
	if _, err := rerank.NewStage(rerank.StageSpec{Type: "wmd", Model: "vec.model"}, env); err == nil || !strings.Contains(err.Error(), "written by model") {
		t.Errorf("payloads of other vectors: error %v", err)
	}
}
