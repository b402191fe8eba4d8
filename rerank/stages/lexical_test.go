package stages

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
)

// termsPayloads serves index.TermsPayload for a fixed set of documents.
type termsPayloads map[string][]byte

func (p termsPayloads) Payload(name, id string) ([]byte, bool, error) {
	b, ok := p[id]
	return b, ok && name == index.TermsPayload, nil
}

func (termsPayloads) PayloadModel(name string) string {
	if name != index.TermsPayload {
		return ""
	}
	return index.TermsEncoder{}.ModelID()
}

// tweakTerms returns the real SemEval slice of testdata/tweak, its
// documents' terms payloads and their document frequencies.
func tweakTerms(tb testing.TB) (*dataset.Dataset, termsPayloads, *tweak.DFTable) {
	tb.Helper()
	ds, err := dataset.Load("../../testdata/tweak")
	if err != nil {
		tb.Fatal(err)
	}
	var texts []string
	payloads := termsPayloads{}
	for _, d := range ds.Corpus {
		texts = append(texts, d.FullText())
		b, err := index.TermsEncoder{}.EncodePayload(d)
		if err != nil {
			tb.Fatal(err)
		}
		payloads[d.ID] = b
	}
	return ds, payloads, tweak.CountDF(texts)
}

// TestLexicalStagesPayloadOrText checks, on a real SemEval slice, that the
// stages reading term counts score every candidate bit for bit the same
// from the index's terms payload as from the text.
func TestLexicalStagesPayloadOrText(t *testing.T) {
	ds, payloads, stats := tweakTerms(t)
	byID := map[string]rerank.Candidate{}
	for _, d := range ds.Corpus {
		byID[d.ID] = rerank.Candidate{Doc: dataset.Doc{ID: d.ID, Title: d.Title, Text: d.Text, Metadata: d.Metadata}}
	}
	build := func(p rerank.Payloads) []rerank.Stage {
		return []rerank.Stage{
			&TFIDF{Stats: stats, Payloads: p},
			&TFIDF{Stats: stats, Payloads: p, Peers: true},
			&BM25{Stats: stats, Payloads: p, K1: 1.2, B: 0.75},
			&Overlap{Payloads: p},
			&Length{Payloads: p},
		}
	}
	// Some documents without payloads: their counts come from the text.
	some := termsPayloads{}
	for i, d := range ds.Corpus {
		if i%3 != 0 {
			some[d.ID] = payloads[d.ID]
		}
	}
	fromText := build(nil)
	// A pipeline gives its stages one memo per window, shared by stages
	// reading the same (comparable) payloads.
	shared := &rerank.Pipeline{Stages: build(&some)}
	ctx := context.Background()
	for _, q := range ds.Queries {
		var cands []rerank.Candidate
		for _, e := range ds.Candidates.Ranking(q.ID) {
			cands = append(cands, byID[e.DocID])
		}
		rq := rerank.Query{Text: q.FullText()}
		memo, err := shared.ScoreStages(ctx, rq, cands)
		if err != nil {
			t.Fatal(err)
		}
		for i, st := range build(payloads) {
			want, err := fromText[i].Score(ctx, rq, cands)
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.Score(ctx, rq, cands)
			if err != nil {
				t.Fatal(err)
			}
			for j := range want {
				if got[j] != want[j] || memo[i][j] != want[j] {
					t.Errorf("%s, query %s, %s: %v from the payload, %v from some payloads in a pipeline, %v from the text",
						st.Name(), q.ID, cands[j].ID, got[j], memo[i][j], want[j])
				}
			}
		}
	}
}

func TestCosine(t *testing.T) {
	tests := []struct {
		a, b map[string]float64
		want float64
	}{
		{map[string]float64{"a": 1, "b": 1}, map[string]float64{"a": 1}, 1 / math.Sqrt2},
		{map[string]float64{"a": 2}, map[string]float64{"a": 3}, 1},
		{map[string]float64{"a": 1}, map[string]float64{"b": 1}, 0},
		{map[string]float64{"b": 1, "c": 2}, map[string]float64{"a": 5, "c": 1, "d": 1}, 2 / math.Sqrt(5*27)},
		{nil, map[string]float64{"a": 1}, 0},
		{map[string]float64{"a": 1}, nil, 0},
	}
	for _, tc := range tests {
		if got := Cosine(tc.a, tc.b); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestTFIDFNormCacheFollowsTheDocument: a document indexed again under
// its id (new term counts) is scored from its new counts, not from the
// norm cached for its old ones.
func TestTFIDFNormCacheFollowsTheDocument(t *testing.T) {
	stats := tweak.CountDF([]string{"bank doha", "visa wife", "bank loan card", "visa"})
	encode := func(text string) []byte {
		b, err := index.TermsEncoder{}.EncodePayload(dataset.Doc{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ctx := context.Background()
	q := rerank.Query{Text: "bank in doha"}
	cands := []rerank.Candidate{{Doc: dataset.Doc{ID: "d"}}}
	p := termsPayloads{"d": encode("bank doha")}
	st := &TFIDF{Stats: stats, Payloads: p}
	for _, text := range []string{"bank doha", "bank loan card bank bank", "bank doha"} {
		p["d"] = encode(text)
		got, err := st.Score(ctx, q, cands)
		if err != nil {
			t.Fatal(err)
		}
		want, err := (&TFIDF{Stats: stats}).Score(ctx, q, []rerank.Candidate{{Doc: dataset.Doc{ID: "d", Text: text}}})
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != want[0] {
			t.Errorf("%q: score %v, from its text %v", text, got[0], want[0])
		}
	}
}

// TestTFIDFIsCosine: a window scored from stored term counts, from text,
// and from both mixed, gives each candidate the cosine of its TF-IDF
// vector with the query's, computed here term by term from the
// statistics, the first time the stage meets the candidates (their norms
// weighed together) and again from its caches.
func TestTFIDFIsCosine(t *testing.T) {
	corpus := []string{"bank doha", "visa wife", "bank loan card bank", "visa", "doha bank card loan", "wife visa doha"}
	stats := tweak.CountDF(corpus)
	n, err := stats.DocCount()
	if err != nil {
		t.Fatal(err)
	}
	vector := func(text string) map[string]float64 {
		v := map[string]float64{}
		for _, tc := range index.CountTerms(analyzers.CachedTokens(text)) {
			df, err := stats.DocFreq(tc.Term)
			if err != nil {
				t.Fatal(err)
			}
			v[tc.Term] = tfidfWeight(tc.Count, idfWeight(n, df))
		}
		return v
	}
	q := rerank.Query{Text: "bank card in doha"}
	p := termsPayloads{}
	var stored, texts, mixed []rerank.Candidate
	for i, text := range corpus {
		id := fmt.Sprint("d", i)
		b, err := index.TermsEncoder{}.EncodePayload(dataset.Doc{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		p[id] = b
		stored = append(stored, rerank.Candidate{Doc: dataset.Doc{ID: id}})
		texts = append(texts, rerank.Candidate{Doc: dataset.Doc{ID: "t" + id, Text: text}})
		mixed = append(mixed, []rerank.Candidate{stored[i], texts[i]}[i%2])
	}
	for _, tc := range []struct {
		name  string
		cands []rerank.Candidate
	}{{"stored", stored}, {"text", texts}, {"mixed", mixed}} {
		st := &TFIDF{Stats: stats, Payloads: p}
		for pass := range 2 {
			got, err := st.Score(context.Background(), q, tc.cands)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range tc.cands {
				text := c.Text
				if text == "" {
					text = corpus[i]
				}
				if want := Cosine(vector(q.Text), vector(text)); math.Abs(got[i]-want) > 1e-12 {
					t.Errorf("%s, pass %d: candidate %d scored %v, want %v", tc.name, pass, i, got[i], want)
				}
			}
		}
	}
}

// countsStage scores a candidate by the counts windowCounts gives for its
// terms, weighted by position, so that counts for other terms show.
type countsStage struct {
	p     rerank.Payloads
	terms []string
}

func (countsStage) Name() string { return "counts" }

func (s countsStage) Score(ctx context.Context, _ rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	counts, totals, err := windowCounts(ctx, s.p, nil, nil, cands, s.terms)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(cands))
	for i := range cands {
		out[i] = float64(totals[i])
		for j, n := range counts[i] {
			out[i] += float64((j+1)*1000) * float64(n)
		}
	}
	return out, nil
}

// TestWindowCountsShared: stages of one window asking for different terms'
// counts from the same payloads each get their own terms' counts.
func TestWindowCountsShared(t *testing.T) {
	docs := []dataset.Doc{
		{ID: "a", Text: "bank account bank river"},
		{ID: "b", Text: "river bank flows"},
		{ID: "c", Text: "account closed"},
	}
	payloads := termsPayloads{}
	var cands []rerank.Candidate
	for _, d := range docs {
		b, err := index.TermsEncoder{}.EncodePayload(d)
		if err != nil {
			t.Fatal(err)
		}
		payloads[d.ID] = b
		cands = append(cands, rerank.Candidate{Doc: dataset.Doc{ID: d.ID, Text: d.Text}})
	}
	sets := [][]string{{"bank", "river"}, {"account"}, nil, {"bank", "river"}, {"flow"}}
	var stages []rerank.Stage
	for _, terms := range sets {
		stages = append(stages, countsStage{&payloads, terms})
	}
	got, err := (&rerank.Pipeline{Stages: stages}).ScoreStages(context.Background(), rerank.Query{}, cands)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range stages {
		want, err := st.Score(context.Background(), rerank.Query{}, cands)
		if err != nil {
			t.Fatal(err)
		}
		for j := range want {
			if got[i][j] != want[j] {
				t.Errorf("terms %v, %s: %v in a pipeline, %v alone", sets[i], cands[j].ID, got[i][j], want[j])
			}
		}
	}
}

// TestTermPlaces finds a token's place exactly as a map of the terms
// does, whatever its length or first byte: the filters in front of the
// map only skip tokens no term can be.
func TestTermPlaces(t *testing.T) {
	long := strings.Repeat("x", 70)
	for _, tc := range []struct {
		name   string
		terms  []string
		tokens []string
	}{
		{"none", nil, []string{"visa", "", long}},
		{"words", []string{"visa", "bank", "qatar"},
			[]string{"visa", "visas", "vise", "bank", "bang", "qatar", "qat", "", "b", "übung", long}},
		{"empty term", []string{"", "a"}, []string{"", "a", "b", "ab"}},
		{"long term", []string{long, "ok"}, []string{long, long + "y", strings.Repeat("x", 64), "ok", "o"}},
		{"unicode", []string{"über", "日本"}, []string{"über", "uber", "日本", "日", "übe"}},
	} {
		p := newTermPlaces(tc.terms)
		want := map[string]int{}
		for j, term := range tc.terms {
			want[term] = j
		}
		for _, tok := range append(tc.tokens, tc.terms...) {
			w, ok := want[tok]
			if !ok {
				w = -1
			}
			if got := p.place(tok); got != w {
				t.Errorf("%s: place(%q) = %d, want %d", tc.name, tok, got, w)
			}
		}
		counts := make([]int, len(tc.terms))
		if n := textCounts(append(tc.tokens, tc.terms...), p, counts); n != len(tc.tokens)+len(tc.terms) {
			t.Errorf("%s: textCounts = %d tokens, want %d", tc.name, n, len(tc.tokens)+len(tc.terms))
		}
		for j, c := range counts {
			if c < 1 {
				t.Errorf("%s: term %q counted %d times, want at least once", tc.name, tc.terms[j], c)
			}
		}
	}
}
