package rerank_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/lsa"
	"github.com/semrank/semrank/rerank"
)

// attachPipeline is every stage reading term counts, and an LSA stage
// reading concept vectors, over plainIndex's fields (fields: given, or
// subject and body).
func attachPipeline(t *testing.T, idx bleve.Index, dir, fields string) *rerank.Pipeline {
	t.Helper()
	if fields == "" {
		fields = "{title: subject, text: [body]}"
	}
	cfg, err := rerank.ParseConfig([]byte(`
window: 30
fields: ` + fields + `
stages:
  - type: tfidf
  - type: bm25
  - type: overlap
  - type: length
  - type: rm3
  - type: lsa
    model: lsa.model
`))
	if err != nil {
		t.Fatal(err)
	}
	env := rerank.EnvOf(idx)
	env.Dir = dir
	p, err := cfg.Build(env)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// searchAll returns every query's reranked hits over idx.
func searchAll(t *testing.T, idx bleve.Index, p *rerank.Pipeline, ds *dataset.Dataset) [][]rerank.Scored {
	t.Helper()
	var out [][]rerank.Scored
	for _, q := range ds.Queries {
		hits, err := rerank.Searcher{Index: idx, Pipeline: p}.Search(context.Background(), rerank.Query{ID: q.ID, Text: q.FullText()}, nil, 30)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, hits)
	}
	return out
}

// readsAnyDoc reports whether a stage of p that says which documents it
// reads (rerank.DocReader; rm3 reads every candidate's) reads the stored
// text of one of ds's documents: one whose payloads are missing.
func readsAnyDoc(t *testing.T, p *rerank.Pipeline, ds *dataset.Dataset) bool {
	t.Helper()
	ids := make([]string, len(ds.Corpus))
	for i, d := range ds.Corpus {
		ids[i] = d.ID
	}
	for _, st := range p.Stages {
		r, ok := st.(rerank.DocReader)
		if !ok {
			continue
		}
		reads := make([]bool, len(ids))
		if err := r.ReadsDocs(context.Background(), ids, reads); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(reads, true) {
			return true
		}
	}
	return false
}

// tolerance is how far a stage's score from attached payloads may be from
// its score from text: none but rounding for the term counts, float32's
// precision for concept vectors, which payloads hold as float32 (as a
// semrank index's do).
func tolerance(stage string) float64 {
	if stage == "lsa" {
		return 1e-6
	}
	return 1e-12
}

// TestAttachScoresAsText attaches payloads to an index a Bleve
// application built, and checks that the stages then read them instead
// of the candidates' text and score as from the text (tolerance); that a
// pipeline reading other fields is not served them; and that writes
// through the Attached, and through another handle followed by a new
// Attach, leave no payload of text a document no longer has.
func TestAttachScoresAsText(t *testing.T) {
	ctx := context.Background()
	ds, err := dataset.Load("../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	ds.Candidates = nil
	dir := t.TempDir()
	var texts []string
	for _, d := range ds.Corpus {
		texts = append(texts, d.FullText())
	}
	lm, err := lsa.Train(texts, lsa.Config{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := lm.Save(filepath.Join(dir, "lsa.model")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "plain")
	if err := plainIndexAt(t, ds, path).Close(); err != nil {
		t.Fatal(err)
	}

	idx, err := index.OpenAny(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := idx.(*index.Attached); ok {
		t.Fatal("OpenAny: an index with nothing attached opened as *index.Attached")
	}
	want := searchAll(t, idx, attachPipeline(t, idx, dir, ""), ds)
	idx.Close()

	a, err := index.OpenAttached(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := rerank.Attach(ctx, a, attachPipeline(t, a, dir, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Docs != len(ds.Corpus) || rep.Computed != len(ds.Corpus) || rep.Kept+rep.Dropped+rep.Skipped != 0 {
		t.Fatalf("first attach: %+v, want all %d documents computed", rep, len(ds.Corpus))
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	idx, err = index.OpenAny(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := idx.(*index.Attached); !ok {
		t.Fatalf("OpenAny: an index with payloads attached opened as %T", idx)
	}
	p := attachPipeline(t, idx, dir, "")
	if readsAnyDoc(t, p, ds) {
		t.Fatal("over the attached index, a stage still reads a document's text")
	}
	got := searchAll(t, idx, p, ds)
	for qi := range want {
		if len(got[qi]) != len(want[qi]) {
			t.Fatalf("query %s: %d hits attached, %d from text", ds.Queries[qi].ID, len(got[qi]), len(want[qi]))
		}
		for i, w := range want[qi] {
			g := got[qi][i]
			for s := range w.StageScores {
				if g.ID == w.ID && math.Abs(g.StageScores[s]-w.StageScores[s]) > tolerance(p.Stages[s].Name()) {
					t.Fatalf("query %s, %s, stage %s: attached %v, from text %v", ds.Queries[qi].ID, w.ID, p.Stages[s].Name(), g.StageScores[s], w.StageScores[s])
				}
			}
			if g.ID != w.ID || math.Abs(g.Score-w.Score) > 1e-6 {
				t.Fatalf("query %s, hit %d: attached %s %v, from text %s %v", ds.Queries[qi].ID, i+1, g.ID, g.Score, w.ID, w.Score)
			}
		}
	}
	// Other fields: the payloads describe other text.
	if !readsAnyDoc(t, attachPipeline(t, idx, dir, "{title: subject, text: []}"), ds) {
		t.Fatal("a pipeline reading other fields was served the attached payloads")
	}
	idx.Close()

	// Writes through the Attached drop the payloads of what they replace
	// or delete; a new Attach computes those, and those of documents
	// changed through another handle, and drops those of documents
	// deleted there.
	a, err = index.OpenAttached(path)
	if err != nil {
		t.Fatal(err)
	}
	first, second, third := ds.Corpus[0].ID, ds.Corpus[1].ID, ds.Corpus[2].ID
	if err := a.Index(first, map[string]any{"subject": "replaced", "body": "new text entirely"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(second); err != nil {
		t.Fatal(err)
	}
	src, _ := a.Source()
	view := a.PayloadsFor(src)
	for _, id := range []string{first, second} {
		if _, ok, _ := view.Payload(index.TermsPayload, id); ok {
			t.Fatalf("document %s, written through the Attached, kept its payload", id)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := bleve.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Index(third, map[string]any{"subject": "changed elsewhere", "body": "by the application"}); err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(ds.Corpus[3].ID); err != nil {
		t.Fatal(err)
	}
	other.Close()
	a, err = index.OpenAttached(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rep, err = rerank.Attach(ctx, a, attachPipeline(t, a, dir, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := len(ds.Corpus)
	if want := (index.AttachReport{Docs: n - 2, Computed: 2, Kept: n - 4, Dropped: 1}); rep != want {
		t.Fatalf("attach after writes: %+v, want %+v", rep, want)
	}

	// Kept: writes through the Attached compute their documents' payloads
	// in the same call, those a new Attach would.
	p = attachPipeline(t, a, dir, "")
	if err := rerank.Keep(a, p); err != nil {
		t.Fatal(err)
	}
	if err := a.Index(first, map[string]any{"subject": "kept", "body": "written through the attached index"}); err != nil {
		t.Fatal(err)
	}
	b := a.NewBatch()
	if err := b.Index(second, map[string]any{"subject": "back", "body": "in a batch"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Batch(b); err != nil {
		t.Fatal(err)
	}
	src, _ = a.Source()
	view = a.PayloadsFor(src)
	st, err := index.NewStats(a, []string{"body", "subject"})
	if err != nil {
		t.Fatal(err)
	}
	for id, text := range map[string]string{first: "kept\nwritten through the attached index", second: "back\nin a batch"} {
		got, ok, _ := view.Payload(index.TermsPayload, id)
		want := index.EncodeTermCounts(st.Tokens(text))
		if !ok || string(got) != string(want) {
			t.Fatalf("document %s written after Keep: terms payload %v (%v), want those of its text", id, got, ok)
		}
	}
	if rep, err = rerank.Attach(ctx, a, p, nil); err != nil || rep.Computed != 0 {
		t.Fatalf("attach after kept writes: %+v, %v; want nothing to compute", rep, err)
	}
}

// BenchmarkKeptWrite writes one document at a time through two attached
// copies of the demo's plain index, one kept (rerank.Keep: the write
// computes the document's payloads) and one not (the write drops them),
// alternately, and reports each write's mean time and their ratio.
func BenchmarkKeptWrite(b *testing.B) {
	ctx := context.Background()
	ds, err := dataset.Load("../testdata/demo")
	if err != nil {
		b.Fatal(err)
	}
	var as [2]*index.Attached
	for i := range as {
		path := filepath.Join(b.TempDir(), "plain")
		idx := plainIndexAt(b, ds, path)
		a, err := index.NewAttached(idx, path)
		if err != nil {
			b.Fatal(err)
		}
		defer a.Close()
		p := plainPipeline(b, a, 30)
		if _, err := rerank.Attach(ctx, a, p, nil); err != nil {
			b.Fatal(err)
		}
		if i == 1 {
			if err := rerank.Keep(a, p); err != nil {
				b.Fatal(err)
			}
		}
		as[i] = a
	}
	var spent [2]time.Duration
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		d := ds.Corpus[n%len(ds.Corpus)]
		for i, a := range as {
			start := time.Now()
			if err := a.Index(d.ID, map[string]any{"subject": d.Title, "body": d.Text + " " + strconv.Itoa(n)}); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(start)
		}
	}
	b.ReportMetric(float64(spent[0].Microseconds())/float64(b.N), "µs/dropped-write")
	b.ReportMetric(float64(spent[1].Microseconds())/float64(b.N), "µs/kept-write")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "kept/dropped")
}

// TestAttachNewModel: a pipeline whose stage model differs from the one
// whose payloads are attached still builds over the index, and computes
// that stage from text; attaching it replaces those payloads.
func TestAttachNewModel(t *testing.T) {
	ctx := context.Background()
	ds, err := dataset.Load("../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var texts []string
	for _, d := range ds.Corpus {
		texts = append(texts, d.FullText())
	}
	path := filepath.Join(dir, "plain")
	a, err := index.NewAttached(plainIndexAt(t, ds, path), path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for i, dim := range []int{8, 6} {
		lm, err := lsa.Train(texts, lsa.Config{Dim: dim})
		if err != nil {
			t.Fatal(err)
		}
		if err := lm.Save(filepath.Join(dir, "lsa.model")); err != nil {
			t.Fatal(err)
		}
		p := attachPipeline(t, a, dir, "") // builds over the other model's payloads
		if i > 0 && !readsAnyDoc(t, p, ds) {
			t.Fatal("a stage reads payloads another model wrote")
		}
		rep, err := rerank.Attach(ctx, a, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Computed != len(ds.Corpus) {
			t.Fatalf("attach with model %d: %+v, want every document computed", i+1, rep)
		}
		if readsAnyDoc(t, attachPipeline(t, a, dir, ""), ds) {
			t.Fatalf("after attaching model %d, a stage still reads text", i+1)
		}
	}
}
