package rerank_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// orchard is a collection where feedback finds what the query's word
// alone cannot: the two documents holding "fruit" are about apple
// orchards, and so are two that never say "fruit".
var orchard = []dataset.Doc{
	{ID: "f1", Title: "fruit", Text: "apple orchard harvest in autumn"},
	{ID: "f2", Title: "fruit growing", Text: "an apple orchard and its harvest"},
	{ID: "a1", Title: "orchards", Text: "apple harvest in the orchard"},
	{ID: "a2", Title: "cider", Text: "pressing apple cider after the harvest"},
	{ID: "c1", Title: "cars", Text: "engine repair and gearbox oil"},
	{ID: "c2", Title: "trains", Text: "railway timetables and engine sheds"},
	{ID: "c3", Title: "boats", Text: "sailing boats in the harbour"},
	{ID: "c4", Title: "planes", Text: "airport runways and jet engines"},
}

// feedbackPipeline builds a pipeline of the first stage with feedback
// alone over idx from doc, a pipeline document's first lines.
func feedbackPipeline(t *testing.T, idx bleve.Index, doc string) *rerank.Pipeline {
	t.Helper()
	cfg, err := rerank.ParseConfig([]byte(doc + "stages: []\nfusion: {method: none}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := cfg.Build(rerank.EnvOf(idx))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFeedbackRetrievesAgain checks, over a semrank index and a plain
// Bleve one, that feedback retrieves documents without the query's word
// (re-retrieval, not a rescoring of BM25's hits), that the Searcher and
// Wrap rank alike with the same scores, and that without feedback only
// the query's word matches.
func TestFeedbackRetrievesAgain(t *testing.T) {
	ctx := context.Background()
	plain := plainIndex(t, &dataset.Dataset{Corpus: orchard})
	semrank := newIndex(t, orchard)
	for _, tc := range []struct {
		name   string
		idx    bleve.Index
		fields string
		idf    string
	}{
		{"semrank index", semrank, "", ""},
		{"semrank index, idf once", semrank, "", ", idf: once"},
		{"plain Bleve index", plain, "fields: {title: subject, text: body}\n", ""},
		{"plain Bleve index, first-stage fields", plain, "fields: {title: subject, text: body}\nfirst_stage: {fields: [subject, body], feedback: {}}\n", ""},
		{"plain Bleve index, idf once", plain, "fields: {title: subject, text: body}\n", ", idf: once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			settings := "{docs: 2, terms: 5, lambda: 0.5" + tc.idf + "}"
			fbDoc := tc.fields + "first_stage: {feedback: " + settings + "}\n"
			if strings.Contains(tc.fields, "first_stage") {
				fbDoc = strings.Replace(tc.fields, "feedback: {}", "feedback: "+settings, 1)
			}
			plainFirst := feedbackPipeline(t, tc.idx, strings.Replace(tc.fields, ", feedback: {}", "", 1))
			fb := feedbackPipeline(t, tc.idx, fbDoc)
			q := rerank.Query{Text: "fruit"}
			search := func(p *rerank.Pipeline) []rerank.Scored {
				t.Helper()
				scored, err := rerank.Searcher{Index: tc.idx, Pipeline: p}.Search(ctx, q, nil, 10)
				if err != nil {
					t.Fatal(err)
				}
				return scored
			}
			idsOf := func(s []rerank.Scored) []string {
				var out []string
				for _, c := range s {
					out = append(out, c.ID)
				}
				return out
			}
			if got := idsOf(search(plainFirst)); len(got) != 2 {
				t.Fatalf("without feedback: %v, want f1 and f2 alone", got)
			}
			scored := search(fb)
			got := idsOf(scored)
			for _, want := range []string{"f1", "f2", "a1", "a2"} {
				if !slices.Contains(got, want) {
					t.Fatalf("with feedback: %v, want %s among them", got, want)
				}
			}
			if slices.Index(got, "a1") < 0 || slices.Index(got, "a1") > slices.Index(got, "a2") {
				t.Errorf("with feedback: %v, want a1 (apple, orchard, harvest) above a2 (apple, harvest)", got)
			}
			for _, c := range []string{"c1", "c2", "c3", "c4"} {
				if slices.Contains(got, c) {
					t.Errorf("with feedback: %v holds %s, which shares no word with the feedback documents", got, c)
				}
			}
			if again := search(fb); !slices.Equal(idsOf(again), got) || again[0].Score != scored[0].Score {
				t.Errorf("a second search ranked %v, the first %v", idsOf(again), got)
			}
			bq, err := fb.Query(q.Text)
			if err != nil {
				t.Fatal(err)
			}
			res, err := rerank.Wrap(tc.idx, fb).Search(bleve.NewSearchRequestOptions(bq, 10, 0, false))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != len(scored) {
				t.Fatalf("Wrap gave %d hits, the Searcher %d", len(res.Hits), len(scored))
			}
			for i, h := range res.Hits {
				if h.ID != scored[i].ID || h.Score != scored[i].Score {
					t.Fatalf("hit %d: Wrap %s %v, Searcher %s %v", i+1, h.ID, h.Score, scored[i].ID, scored[i].Score)
				}
			}
			if f := fb.Feedback(); f == nil || f.Docs != 2 || f.Terms != 5 || *f.Lambda != 0.5 {
				t.Errorf("Feedback() = %+v, want docs 2, terms 5, lambda 0.5", f)
			}
			if un := idsOf(rerankSearch(t, tc.idx, fb.Unexpanded(), q)); !slices.Equal(un, idsOf(search(plainFirst))) {
				t.Errorf("Unexpanded ranks %v, the first stage without feedback %v", un, idsOf(search(plainFirst)))
			}
		})
	}
}

// rerankSearch searches idx with p for q's top 10.
func rerankSearch(t *testing.T, idx bleve.Index, p *rerank.Pipeline, q rerank.Query) []rerank.Scored {
	t.Helper()
	scored, err := rerank.Searcher{Index: idx, Pipeline: p}.Search(context.Background(), q, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	return scored
}

// TestFeedbackConfigErrors: settings that mean nothing are refused with
// the key and what it takes.
func TestFeedbackConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"negative docs", "first_stage: {feedback: {docs: -1}}", "first_stage.feedback.docs -1"},
		{"too many terms", "first_stage: {feedback: {terms: 5000}}", "first_stage.feedback.terms 5000"},
		{"lambda above 1", "first_stage: {feedback: {lambda: 1.5}}", "first_stage.feedback.lambda 1.5"},
		{"lambda NaN", "first_stage: {feedback: {lambda: .nan}}", "first_stage.feedback.lambda NaN"},
		{"unknown key", "first_stage: {feedback: {doc: 3}}", "first_stage.feedback"},
		{"with query boost", "first_stage: {query_boost: tweak, feedback: {}}", "query_boost"},
		{"unknown idf", "first_stage: {feedback: {idf: twice}}", "first_stage.feedback.idf \"twice\""},
		{"overlap above 1", "first_stage: {feedback: {min_overlap: 1.5}}", "first_stage.feedback.min_overlap 1.5"},
		{"negative overlap", "first_stage: {feedback: {min_overlap: -0.1}}", "first_stage.feedback.min_overlap -0.1"},
		{"unknown scope", "first_stage: {feedback: {scope: all}}", "first_stage.feedback.scope \"all\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rerank.ParseConfig([]byte(tc.doc + "\nstages: [{type: tfidf}]\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// TestParseFeedback reads --feedback's values.
func TestParseFeedback(t *testing.T) {
	l := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		in      string
		want    *rerank.Feedback
		wantErr string
	}{
		{"none", nil, ""},
		{"rm3", &rerank.Feedback{}, ""},
		{"docs=10,terms=30,lambda=0.5", &rerank.Feedback{Docs: 10, Terms: 30, Lambda: l(0.5)}, ""},
		{"lambda=0", &rerank.Feedback{Lambda: l(0)}, ""},
		{" terms=50 ", &rerank.Feedback{Terms: 50}, ""},
		{"idf=once", &rerank.Feedback{IDF: rerank.IDFOnce}, ""},
		{"idf=twice", nil, "idf"},
		{"min_overlap=0.5", &rerank.Feedback{MinOverlap: 0.5}, ""},
		{"min_overlap=1.5", nil, "min_overlap"},
		{"min_overlap=half", nil, "not a number"},
		{"scope=query", &rerank.Feedback{Scope: rerank.ScopeQuery}, ""},
		{"scope=all", nil, "scope"},
		{"", nil, "KEY=VALUE"},
		{"docs", nil, "KEY=VALUE"},
		{"docs=0", nil, "at least 1"},
		{"docs=ten", nil, "not a number"},
		{"docs=1,docs=2", nil, "twice"},
		{"k=10", nil, "unknown key"},
		{"lambda=2", nil, "from 0 to 1"},
		{"terms=1001", nil, "1 to 1000"},
	} {
		got, err := rerank.ParseFeedback(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseFeedback(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseFeedback(%q): %v", tc.in, err)
			continue
		}
		if (got == nil) != (tc.want == nil) || got != nil && (got.Docs != tc.want.Docs || got.Terms != tc.want.Terms || got.IDF != tc.want.IDF || got.MinOverlap != tc.want.MinOverlap || got.Scope != tc.want.Scope ||
			(got.Lambda == nil) != (tc.want.Lambda == nil) || got.Lambda != nil && *got.Lambda != *tc.want.Lambda) {
			t.Errorf("ParseFeedback(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// FuzzParseFeedback: any value is read or refused, never a panic, and
// what is read is within bounds.
func FuzzParseFeedback(f *testing.F) {
	for _, s := range []string{"none", "rm3", "docs=10,terms=30,lambda=0.5", "lambda=NaN", "docs=-1", "=,=", "terms=1e9", "min_overlap=NaN", "min_overlap=0.5", "scope=query"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fb, err := rerank.ParseFeedback(s)
		if err != nil || fb == nil {
			return
		}
		if fb.Scope != "" && fb.Scope != rerank.ScopeIndex && fb.Scope != rerank.ScopeQuery {
			t.Fatalf("ParseFeedback(%q) = %+v: unknown scope", s, fb)
		}
		if fb.Docs < 0 || fb.Docs > rerank.MaxFeedback || fb.Terms < 0 || fb.Terms > rerank.MaxFeedback ||
			fb.Lambda != nil && !(*fb.Lambda >= 0 && *fb.Lambda <= 1) || !(fb.MinOverlap >= 0 && fb.MinOverlap <= 1) {
			t.Fatalf("ParseFeedback(%q) = %+v: out of bounds", s, fb)
		}
	})
}

// TestRelevanceModel checks the mixed model's invariants on term lists:
// weights sum to 1, the query's words keep at least lambda/|Q| each, and
// at most terms feedback words join them.
func TestRelevanceModel(t *testing.T) {
	docs := [][]index.TermCount{
		{{Term: "apple", Count: 2}, {Term: "harvest", Count: 1}, {Term: "orchard", Count: 1}},
		{{Term: "apple", Count: 1}, {Term: "cider", Count: 3}},
	}
	for _, tc := range []struct {
		name   string
		query  []string
		scores []float64
		terms  int
		lambda float64
		want   []string
	}{
		// apple: 2/4·2/3 + 1/4·1/3 = 5/12, above cider: 3/4·1/3 = 1/4.
		{"one term", []string{"fruit"}, []float64{2, 1}, 1, 0.5, []string{"apple", "fruit"}},
		{"every term", []string{"fruit"}, []float64{2, 1}, 10, 0.5, []string{"apple", "cider", "fruit", "harvest", "orchard"}},
		{"query alone", []string{"fruit", "apple"}, []float64{2, 1}, 10, 1, []string{"apple", "fruit"}},
		{"negative scores", []string{"fruit"}, []float64{-1, 1}, 2, 0.3, []string{"apple", "cider", "fruit"}},
		{"no query words", nil, []float64{0, 0}, 2, 0.5, []string{"apple", "cider"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rerank.RelevanceModel(tc.query, docs, tc.scores, tc.terms, tc.lambda)
			var terms []string
			sum := 0.0
			for _, wt := range got {
				terms = append(terms, wt.Term)
				sum += wt.Weight
				if slices.Contains(tc.query, wt.Term) && len(tc.query) > 0 && wt.Weight < tc.lambda/float64(len(tc.query))-1e-12 {
					t.Errorf("query word %s weighs %v, below lambda/|Q|", wt.Term, wt.Weight)
				}
			}
			if !slices.Equal(terms, tc.want) {
				t.Errorf("terms %v, want %v", terms, tc.want)
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("weights sum to %v, want 1", sum)
			}
		})
	}
}

// TestFeedbackIDFOnce: idf once divides each boost by the term's idf, so
// the window's scores differ from the default's, by a factor that is not
// the same for every document.
func TestFeedbackIDFOnce(t *testing.T) {
	idx := newIndex(t, orchard)
	q := rerank.Query{Text: "fruit"}
	scores := func(idf string) map[string]float64 {
		p := feedbackPipeline(t, idx, "first_stage: {feedback: {docs: 2, terms: 5, idf: "+idf+"}}\n")
		out := map[string]float64{}
		for _, s := range rerankSearch(t, idx, p, q) {
			out[s.ID] = s.Candidate.Score
		}
		return out
	}
	bleveScores, once := scores("bleve"), scores("once")
	if len(bleveScores) != len(once) {
		t.Fatalf("idf once found %d documents, bleve %d: the same terms should match the same documents", len(once), len(bleveScores))
	}
	ratios := map[float64]bool{}
	for id, s := range bleveScores {
		ratios[math.Round(once[id]/s*1e6)] = true
	}
	if len(ratios) < 2 {
		t.Errorf("scores with idf once are the default's times one factor (%v): the boosts were not divided per term", ratios)
	}
}

// TestFeedbackKeepsRestrictions checks that a request whose query does
// more than ask for words (a filter, a negation, a field) keeps doing it
// with feedback: every hit of the window still matches it, while a plain
// match query of the same words retrieves by feedback words too.
func TestFeedbackKeepsRestrictions(t *testing.T) {
	idx := plainIndex(t, &dataset.Dataset{Corpus: orchard})
	p := feedbackPipeline(t, idx, "fields: {title: subject, text: body}\nfirst_stage: {feedback: {docs: 2, terms: 5}}\n")
	term := func(field, word string) *query.TermQuery {
		q := bleve.NewTermQuery(word)
		q.SetField(field)
		return q
	}
	fruitApple := bleve.NewMatchQuery("fruit apple")
	notCider := bleve.NewBooleanQuery()
	notCider.AddMust(bleve.NewMatchQuery("fruit apple"))
	notCider.AddMustNot(term("body", "cider"))
	subject := bleve.NewMatchQuery("fruit")
	subject.SetField("subject")
	for _, tc := range []struct {
		name    string
		q       query.Query
		want    []string // among the hits
		refused []string // none of the hits
	}{
		{"words alone", bleve.NewMatchQuery("fruit"), []string{"f1", "f2", "a1", "a2"}, nil},
		{"a conjunction with a filter", bleve.NewConjunctionQuery(fruitApple, term("body", "orchard")), []string{"f1", "f2", "a1"}, []string{"a2"}},
		{"a negation", notCider, []string{"f1", "f2", "a1"}, []string{"a2"}},
		{"another field", subject, []string{"f1", "f2"}, []string{"a1", "a2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := rerank.Wrap(idx, p).Search(bleve.NewSearchRequestOptions(tc.q, 10, 0, false))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.ID)
			}
			for _, id := range tc.want {
				if !slices.Contains(got, id) {
					t.Errorf("hits %v, want %s among them", got, id)
				}
			}
			for _, id := range tc.refused {
				if slices.Contains(got, id) {
					t.Errorf("hits %v hold %s, which the request's query does not match", got, id)
				}
			}
		})
	}
}

// TestFeedbackGuard: with min_overlap the expanded query retrieves the
// window only where its top documents are the feedback documents. For
// "mango" both feedback documents are about chutney as well, the expanded
// query's top two are them again, and it retrieves the chutney jar too;
// for "kiwi" the feedback documents are a bird and a fruit, the expanded
// query's top document is neither (it holds both their words), and the
// guarded window is the query's own.
func TestFeedbackGuard(t *testing.T) {
	idx := newIndex(t, []dataset.Doc{
		{ID: "m1", Title: "mango", Text: "mango chutney chutney"},
		{ID: "m2", Title: "mango", Text: "mango chutney chutney spice"},
		{ID: "m3", Title: "jar", Text: "chutney jar"},
		{ID: "k1", Title: "kiwi", Text: "feathers feathers night"},
		{ID: "k2", Title: "kiwi", Text: "vitamin vitamin green"},
		{ID: "x1", Title: "shop", Text: "feathers vitamin feathers vitamin"},
		{ID: "o1", Title: "other", Text: "unrelated words here"},
	})
	const fb = "first_stage: {feedback: {docs: 2, terms: 2, lambda: 0%s}}\n"
	window := func(doc, text string) []string {
		t.Helper()
		var ids []string
		for _, s := range rerankSearch(t, idx, feedbackPipeline(t, idx, doc), rerank.Query{Text: text}) {
			ids = append(ids, s.ID)
		}
		slices.Sort(ids)
		return ids
	}
	for _, tc := range []struct {
		text, guard string
		want        []string
	}{
		{"mango", "", []string{"m1", "m2", "m3"}},
		{"mango", ", min_overlap: 1", []string{"m1", "m2", "m3"}},
		{"kiwi", "", []string{"k1", "k2", "x1"}},
		{"kiwi", ", min_overlap: 0.5", []string{"k1", "k2", "x1"}},
		{"kiwi", ", min_overlap: 1", []string{"k1", "k2"}},
	} {
		if got := window(fmt.Sprintf(fb, tc.guard), tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%q%s: window %v, want %v", tc.text, tc.guard, got, tc.want)
		}
	}
	if got := window("", "kiwi"); !slices.Equal(got, []string{"k1", "k2"}) {
		t.Errorf("kiwi without feedback: %v, want k1 and k2", got)
	}
}

// TestFeedbackScopeQuery: with the scope query the expanded query
// reorders the documents the query matches and brings in none that hold
// feedback words alone; the orchards without "fruit", which re-retrieval
// from the whole index finds, stay out.
func TestFeedbackScopeQuery(t *testing.T) {
	idx := newIndex(t, orchard)
	window := func(doc string) []string {
		t.Helper()
		var ids []string
		for _, s := range rerankSearch(t, idx, feedbackPipeline(t, idx, doc), rerank.Query{Text: "fruit"}) {
			ids = append(ids, s.ID)
		}
		slices.Sort(ids)
		return ids
	}
	const fb = "first_stage: {feedback: {docs: 2, terms: 5, scope: %s}}\n"
	if got := window(fmt.Sprintf(fb, "index")); !slices.Equal(got, []string{"a1", "a2", "f1", "f2"}) {
		t.Errorf("scope index: window %v, want the orchards without fruit too", got)
	}
	if got := window(fmt.Sprintf(fb, "query")); !slices.Equal(got, []string{"f1", "f2"}) {
		t.Errorf("scope query: window %v, want f1 and f2, the documents holding fruit", got)
	}
}
