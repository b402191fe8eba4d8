package translation

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/models/internal/modeltest"
)

// forum is a small parallel corpus: questions about prices are answered
// with amounts in riyals, questions about places with roads, and the
// answers share no word with their questions.
var forum = []Pair{
	{"How much is the rent for a flat?", "About 5000 riyals a month."},
	{"How much does a used car cost?", "Around 30000 riyals."},
	{"How much is a visa?", "It costs 200 riyals at immigration."},
	{"Best location to buy a used car?", "Try the dealers on Salwa Road."},
	{"Location of a good tailor?", "There are many on Salwa Road."},
	{"Location of the immigration office?", "Near the Airport Road."},
}

func train(t *testing.T, pairs []Pair, cfg Config) *Model {
	t.Helper()
	m, err := Train(context.Background(), pairs, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func toyConfig() Config {
	c := DefaultConfig()
	c.MinCount = 1
	return c
}

// word returns the vocabulary index of text's only analyzer token.
func word(t *testing.T, m *Model, text string) int32 {
	t.Helper()
	toks := analyzers.Tokens(text)
	if len(toks) != 1 {
		t.Fatalf("%q has tokens %q, want one", text, toks)
	}
	i, ok := m.index[toks[0]]
	if !ok {
		t.Fatalf("%q not in the vocabulary", toks[0])
	}
	return i
}

// TestTrainLearnsTranslations: EM must make "riyals" translate most into
// "much" and "road" into "location", words they never equal;
// co-occurrence alone would link them as much to "car", "visa" or "office".
func TestTrainLearnsTranslations(t *testing.T) {
	m := train(t, forum, toyConfig())
	for _, tc := range []struct{ source, want string }{
		{"riyals", "much"},
		{"road", "location"},
	} {
		row := m.Rows[word(t, m, tc.source)]
		best := row.Targets[slices.Index(row.P, slices.Max(row.P))]
		if got := m.Vocab[best]; got != analyzers.Tokens(tc.want)[0] {
			t.Errorf("%s translates most into %q, want %q (row %v)", tc.source, got, tc.want, row)
		}
		var sum float64
		for _, p := range row.P {
			sum += p
		}
		if sum > 1+sumSlack {
			t.Errorf("%s: translations sum to %v", tc.source, sum)
		}
	}
}

func TestScoreRanksAnswers(t *testing.T) {
	m := train(t, forum, toyConfig())
	for _, tc := range []struct {
		question     string
		better, than string
	}{
		{"How much is a flat?", "2000 riyals", "Salwa Road"},
		{"Location of a tailor?", "Salwa Road", "2000 riyals"},
		// Word match still counts: the question's own words beat nothing.
		{"How much is a flat?", "flat", "thanks"},
	} {
		s := m.Score(tc.question, []string{tc.better, tc.than})
		if !(s[0] > s[1]) {
			t.Errorf("%q: %q scored %v, %q %v; want the first higher", tc.question, tc.better, s[0], tc.than, s[1])
		}
		for _, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) || v >= 0 {
				t.Errorf("%q: score %v, want a finite log-likelihood", tc.question, v)
			}
		}
	}
	// Without translation (β = 0) the amount is as foreign to the question
	// as the road.
	c := toyConfig()
	c.Beta = 0
	s := train(t, forum, c).Score("How much is a flat?", []string{"2000 riyals", "Salwa Road"})
	if s[0] != s[1] {
		t.Errorf("β = 0: %v, want equal scores", s)
	}
}

func TestScoreEdgeCases(t *testing.T) {
	m := train(t, forum, toyConfig())
	if s := m.Score("the of and", []string{"riyals", ""}); s[0] != 0 || s[1] != 0 {
		t.Errorf("question without words: %v, want zeros", s)
	}
	if s := m.Score("How much?", nil); len(s) != 0 {
		t.Errorf("no candidates: %v", s)
	}
	s := m.Score("How much is a zeppelin?", []string{"", "zeppelin"})
	if math.IsNaN(s[0]) || math.IsInf(s[0], 0) || !(s[1] > s[0]) {
		t.Errorf("empty candidate and unknown word: %v, want finite, the match higher", s)
	}
}

func TestTrainRefuses(t *testing.T) {
	with := func(f func(*Config)) Config {
		c := toyConfig()
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name  string
		pairs []Pair
		cfg   Config
		want  string
	}{
		{"no pairs", nil, toyConfig(), "no question–answer pairs"},
		{"stop words only", []Pair{{"the of", "and the"}}, toyConfig(), "no word occurs"},
		{"no answer words kept", []Pair{{"visa visa", "once"}}, with(func(c *Config) { c.MinCount = 2 }), "no pair has vocabulary words"},
		{"iterations 0", forum, with(func(c *Config) { c.Iterations = 0 }), "iterations"},
		{"min_count 0", forum, with(func(c *Config) { c.MinCount = 0 }), "min_count"},
		{"prune 1", forum, with(func(c *Config) { c.Prune = 1 }), "prune"},
		{"prune NaN", forum, with(func(c *Config) { c.Prune = math.NaN() }), "prune"},
		{"lambda 0", forum, with(func(c *Config) { c.Lambda = 0 }), "lambda"},
		{"lambda 1", forum, with(func(c *Config) { c.Lambda = 1 }), "lambda"},
		{"beta above 1", forum, with(func(c *Config) { c.Beta = 1.5 }), "beta"},
		{"lambda underflows", forum, with(func(c *Config) { c.Lambda = 5e-324 }), "no likelihood"},
	} {
		_, err := Train(context.Background(), tc.pairs, nil, tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

// cancelledAfter is a context cancelled once its Err has been asked n
// times: cancelled while the training runs.
type cancelledAfter struct {
	context.Context
	n int
}

func (c *cancelledAfter) Err() error {
	if c.n == 0 {
		return context.Canceled
	}
	c.n--
	return nil
}

// TestTrainCancelled: a training cancelled at any point returns
// context.Canceled, not a model. Cancelled during the last EM iteration,
// it returned the model, which semrank train translation then saved.
func TestTrainCancelled(t *testing.T) {
	cfg := toyConfig()
	cfg.Iterations = 3
	for n := 0; n <= cfg.Iterations; n++ {
		ctx := &cancelledAfter{Context: context.Background(), n: n}
		if m, err := Train(ctx, forum, nil, cfg); !errors.Is(err, context.Canceled) || m != nil {
			t.Errorf("cancelled after %d checks: model %v, err = %v, want context.Canceled", n, m != nil, err)
		}
	}
}

// TestDeterministicAndRoundTrip: training twice gives the same file, and
// the saved model scores as the trained one, bit for bit.
func TestDeterministicAndRoundTrip(t *testing.T) {
	a, b := train(t, forum, toyConfig()), train(t, forum, toyConfig())
	if !bytes.Equal(modeltest.Saved(t, a), modeltest.Saved(t, b)) {
		t.Fatal("two trainings on the same pairs saved different models")
	}
	path := filepath.Join(t.TempDir(), "t.model")
	if err := a.Save(path); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cands := []string{"2000 riyals", "Salwa Road", "", "a zeppelin"}
	for _, q := range []string{"How much is a flat?", "Location of a tailor?"} {
		if got, want := l.Score(q, cands), a.Score(q, cands); !slices.Equal(got, want) {
			t.Errorf("%q: loaded model scores %v, trained %v", q, got, want)
		}
	}
}

// TestCollectionModel: the collection, not the pairs, gives the background
// probabilities and the vocabulary when it is given.
func TestCollectionModel(t *testing.T) {
	coll := []string{"riyals riyals riyals road", "much visa car flat office"}
	m, err := Train(context.Background(), forum, coll, toyConfig())
	if err != nil {
		t.Fatal(err)
	}
	r := word(t, m, "riyals")
	if got := m.Background[r]; got != 3.0/9 {
		t.Errorf("P(riyal) = %v, want 3/9", got)
	}
	if got := m.Background[len(m.Vocab)]; got != 0.5/9 {
		t.Errorf("unknown word's probability %v, want 0.5/9", got)
	}
	if _, ok := m.index["tailor"]; ok {
		t.Error(`"tailor" is in the vocabulary, but not in the collection`)
	}
}

// TestEMByHand checks the table against IBM Model 1's EM worked by hand
// on two pairs, "visa salary" ← "sponsor" and "visa" ← "sponsor bank",
// each answer with a NULL word. The first E-step splits each question
// word evenly over its answer's words and NULL; the second weighs them by
// the first table.
func TestEMByHand(t *testing.T) {
	pairs := []Pair{{"visa salary", "sponsor"}, {"visa", "sponsor bank"}}
	for _, tc := range []struct {
		iterations int
		source     string
		want       map[string]float64
	}{
		{1, "sponsor", map[string]float64{"visa": 5.0 / 8, "salary": 3.0 / 8}},
		{1, "bank", map[string]float64{"visa": 1}},
		{2, "sponsor", map[string]float64{"visa": 14.0 / 23, "salary": 9.0 / 23}},
		{2, "bank", map[string]float64{"visa": 1}},
	} {
		cfg := toyConfig()
		cfg.Iterations, cfg.Prune = tc.iterations, 0
		m := train(t, pairs, cfg)
		row := m.Rows[word(t, m, tc.source)]
		if len(row.Targets) != len(tc.want) {
			t.Errorf("%d iterations: %s translates into %d words, want %d", tc.iterations, tc.source, len(row.Targets), len(tc.want))
		}
		for target, p := range tc.want {
			if got := row.lookup(word(t, m, target)); math.Abs(got-p) > 1e-12 {
				t.Errorf("%d iterations: T(%s|%s) = %v, want %v", tc.iterations, target, tc.source, got, p)
			}
		}
	}
}

// TestScoreByHand checks Score against the package comment's formula,
// worked by hand with the one-iteration table of TestEMByHand, λ = 0.2,
// β = 0.5 and the pairs' six tokens as the collection (visa 2, salary 1,
// sponsor 2, bank 1; an unknown word 0.5).
func TestScoreByHand(t *testing.T) {
	cfg := toyConfig()
	cfg.Iterations, cfg.Prune = 1, 0
	m := train(t, []Pair{{"visa salary", "sponsor"}, {"visa", "sponsor bank"}}, cfg)
	like := func(translation, match, background float64) float64 {
		return math.Log(0.8*(0.5*translation+0.5*match) + 0.2*background)
	}
	for _, tc := range []struct {
		question, candidate string
		want                float64
	}{
		// T(visa|·): sponsor 5/8, bank 1; T(salary|sponsor) 3/8.
		{"visa salary", "sponsor sponsor bank", (like(5.0/8*2/3+1.0/3, 0, 2.0/6) + like(3.0/8*2/3, 0, 1.0/6)) / 2},
		// visa has no translations; it matches itself.
		{"visa salary", "visa zeppelin", (like(0, 0.5, 2.0/6) + like(0, 0, 1.0/6)) / 2},
		{"visa zeppelin", "bank", (like(1, 0, 2.0/6) + like(0, 0, 0.5/6)) / 2},
		{"visa", "", like(0, 0, 2.0/6)},
	} {
		if got := m.Score(tc.question, []string{tc.candidate})[0]; math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%q for %q: %v, want %v", tc.candidate, tc.question, got, tc.want)
		}
	}
}

// TestReadRefusesOtherAnalyzers: the table's words are one analyzer's
// tokens; a model recording another, or none, is refused, saying why.
func TestReadRefusesOtherAnalyzers(t *testing.T) {
	m := train(t, forum, toyConfig())
	name, _, _ := strings.Cut(analyzers.ID(), "/")
	for _, tc := range []struct {
		analyzer string
		want     []string
	}{
		{name + "/0", []string{"analyzer mismatch", name + "/0", analyzers.ID(), "retrain"}},
		{"another_analyzer/1", []string{"analyzer mismatch", "another_analyzer/1", "retrain"}},
		{"", []string{"records no analyzer"}},
	} {
		c := *m
		c.Analyzer = tc.analyzer
		_, err := Read(bytes.NewReader(modeltest.Saved(t, &c)), "other.model")
		if err == nil {
			t.Errorf("analyzer %q: loaded", tc.analyzer)
			continue
		}
		for _, s := range append(tc.want, "other.model") {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("analyzer %q: error %q does not mention %q", tc.analyzer, err, s)
			}
		}
	}
}
