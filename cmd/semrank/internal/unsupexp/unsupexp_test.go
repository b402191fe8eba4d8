package unsupexp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/models/ssg"
	"github.com/semrank/semrank/models/ssg/ssgtest"
	"github.com/semrank/semrank/models/wmd"
)

func TestLexicalBaselines(t *testing.T) {
	corpus := []dataset.Doc{
		{ID: "a", Text: "best bank in doha for a loan"},
		{ID: "b", Text: "camping in the desert near the beach"},
		{ID: "c", Text: "bank opening hours in ramadan"},
	}
	st := CorpusStats(corpus)
	if st.N != 3 || st.DF["bank"] != 2 {
		t.Fatalf("stats: N %v, df(bank) %v", st.N, st.DF["bank"])
	}
	q := "which bank gives a loan"
	tests := []struct {
		name string
		f    func(q, d string) float64
	}{{"bm25", st.BM25}, {"tfidf", st.TFIDFCosine}}
	for _, tc := range tests {
		a, b, c := tc.f(q, corpus[0].Text), tc.f(q, corpus[1].Text), tc.f(q, corpus[2].Text)
		if !(a > c && c > b && b == 0) {
			t.Errorf("%s: scores %v %v %v, want a > c > b = 0", tc.name, a, c, b)
		}
	}
	if got := NegInfLast([]float64{-1, math.Inf(-1), -3}); got[1] != -4 {
		t.Errorf("NegInfLast = %v", got)
	}
}

func TestRunKeepsOrderOnFailure(t *testing.T) {
	qs := []dataset.Query{{ID: "q1", Text: "x"}}
	lists := Lists{"q1": {{ID: "d1", Rank: 1}, {ID: "d2", Rank: 2}}}
	cannot := System{"cannot", func(context.Context, string, []Candidate) ([]float64, error) {
		return nil, ssg.ErrEmptyQuery
	}}
	run, fb, err := Run(context.Background(), qs, lists, cannot)
	if err != nil || fb != 1 {
		t.Fatalf("fallbacks %d, err %v", fb, err)
	}
	if r := run.Sorted("q1"); r[0].DocID != "d1" {
		t.Errorf("fallback order %v", r)
	}
	// Any other failure is an error naming the system and the query, not
	// a fallback that would pass for a ranking.
	fail := System{"fail", func(context.Context, string, []Candidate) ([]float64, error) {
		return nil, os.ErrInvalid
	}}
	if _, _, err := Run(context.Background(), qs, lists, fail); !errors.Is(err, os.ErrInvalid) || !strings.Contains(err.Error(), "fail, query q1") {
		t.Errorf("failing system: err %v", err)
	}
	// A cancelled run is stopped, not failed: its error is the context's
	// own, which semrank's main reports as an interrupt.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stopped := System{"stopped", func(ctx context.Context, _ string, _ []Candidate) ([]float64, error) {
		return nil, ctx.Err()
	}}
	if _, _, err := Run(ctx, qs, lists, stopped); err == nil || err.Error() != context.Canceled.Error() {
		t.Errorf("cancelled run: err %v, want %v", err, context.Canceled)
	}
	flip := System{"flip", func(_ context.Context, _ string, c []Candidate) ([]float64, error) {
		return []float64{0, 1}, nil
	}}
	run, _, _ = Run(context.Background(), qs, lists, flip)
	if r := run.Sorted("q1"); r[0].DocID != "d2" {
		t.Errorf("reranked order %v", r)
	}
}

// TestWMDCountsQueriesWithoutVectors checks that a query with no word that
// has a vector, which WMD cannot rank, is counted as keeping its
// first-stage order (the table's note), as SSG counts it, rather than
// passed off as a WMD ranking.
func TestWMDCountsQueriesWithoutVectors(t *testing.T) {
	v, err := embed.NewVectors([]string{"bank", "loan", "beach"}, 2, []float64{1, 0, 0.9, 0.1, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	space := wmd.NewSpace(v)
	var sys System
	for _, s := range Systems(Stats{}, space, nil, nil, nil) {
		if s.Name == "WMD" {
			sys = s
		}
	}
	lists := Lists{"q1": {{ID: "d1", Text: "beach", Rank: 1}, {ID: "d2", Text: "bank loan", Rank: 2}}}
	tests := []struct {
		query     string
		fallbacks int
		first     string
	}{
		{"bank", 0, "d2"},
		{"zebra unknown", 1, "d1"},
		{"", 1, "d1"},
	}
	for _, tc := range tests {
		run, fb, err := Run(context.Background(), []dataset.Query{{ID: "q1", Text: tc.query}}, lists, sys)
		if err != nil {
			t.Fatal(err)
		}
		if fb != tc.fallbacks {
			t.Errorf("query %q: %d fallbacks, want %d", tc.query, fb, tc.fallbacks)
		}
		if r := run.Sorted("q1"); r[0].DocID != tc.first {
			t.Errorf("query %q: first %s, want %s", tc.query, r[0].DocID, tc.first)
		}
	}
}

func TestSpeedAndPairs(t *testing.T) {
	words := []string{"bank", "loan", "salary", "beach", "desert", "sand"}
	data := []float64{1, 0, 1.1, 0.1, 0.9, 0.2, 0, 1, 0.1, 1.2, 0.2, 0.8}
	v, err := embed.NewVectors(words, 2, data)
	if err != nil {
		t.Fatal(err)
	}
	space := wmd.NewSpace(v)
	var qs, docs []wmd.Doc
	for _, s := range []string{"bank loan", "beach sand"} {
		qs = append(qs, space.Doc(s))
	}
	for _, s := range []string{"salary bank", "desert", "loan loan sand", "beach bank", "sand desert beach"} {
		docs = append(docs, space.Doc(s))
	}
	res, pairs, err := Speed(context.Background(), space, qs, docs, 2)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pairs != 10 || len(pairs) != 10 || !res.SameNeighbours {
		t.Fatalf("pairs %d, same neighbours %v", res.Pairs, res.SameNeighbours)
	}
	var buf bytes.Buffer
	if err := WritePairs(&buf, pairs); err != nil {
		t.Fatal(err)
	}
	var nm [2]int32
	if err := binary.Read(&buf, binary.LittleEndian, &nm); err != nil || int(nm[0]) != len(pairs[0].A) || int(nm[1]) != len(pairs[0].B) {
		t.Errorf("first pair header %v, %v", nm, err)
	}
	path := filepath.Join(t.TempDir(), "v.bin")
	raw := make([]byte, 16)
	binary.LittleEndian.PutUint64(raw, math.Float64bits(1.5))
	binary.LittleEndian.PutUint64(raw[8:], math.Float64bits(-2))
	os.WriteFile(path, raw, 0o644)
	if got, err := ReadValues(path); err != nil || got[0] != 1.5 || got[1] != -2 {
		t.Errorf("ReadValues = %v, %v", got, err)
	}
	os.WriteFile(path, raw[:5], 0o644)
	// The error names the file: wmd-speed reads it among others.
	if _, err := ReadValues(path); err == nil || !strings.Contains(err.Error(), path+": 5 bytes, not a multiple of 8") {
		t.Errorf("truncated values: err = %v, want one naming %s and its size", err, path)
	}
}

// TestSpeedRefusesNoPairs checks that an empty speed test is an error,
// not a division by zero (semrank experiment wmd-speed --queries 0
// panicked), and that a negative count is not read as "all".
func TestSpeedRefusesNoPairs(t *testing.T) {
	v, err := embed.NewVectors([]string{"bank", "loan"}, 2, []float64{1, 0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	space := wmd.NewSpace(v)
	docs := []wmd.Doc{space.Doc("bank"), space.Doc("loan")}
	if _, _, err := Speed(context.Background(), space, nil, docs, 1); err == nil {
		t.Error("Speed with no queries: no error")
	}
	ds := &dataset.Dataset{
		Queries: []dataset.Query{{ID: "q1", Text: "bank"}},
		Corpus:  []dataset.Doc{{ID: "d1", Text: "loan"}},
	}
	for _, cfg := range []SpeedConfig{{Queries: 0, Docs: 1}, {Queries: -1, Docs: 1}, {Queries: 1, Docs: -1}} {
		if _, _, err := SpeedDocs(space, ds, cfg); err == nil {
			t.Errorf("SpeedDocs(%+v): no error", cfg)
		}
	}
}

// TestWriteTableNeedsBase checks that a base naming no system is an error
// (it printed the table without a single comparison), and that
// SystemNames lists the systems Systems builds.
func TestWriteTableNeedsBase(t *testing.T) {
	ms := eval.MustParseMetrics("map@10")
	res, err := eval.Evaluate(dataset.Qrels{"q1": {"d1": 1}}, dataset.NewRun(), ms)
	if err != nil {
		t.Fatal(err)
	}
	rows := []Row{{Name: "IR order", Result: res}, {Name: "WMD", Result: res}}
	var buf bytes.Buffer
	if err := WriteTable(&buf, rows, ms, "IR ordr"); err == nil || !strings.Contains(err.Error(), `"IR ordr"`) {
		t.Errorf("unknown base: err = %v", err)
	}
	if err := WriteTable(&buf, rows, ms, "IR order"); err != nil || !strings.Contains(buf.String(), "| WMD | 0.0000 | +0.0000 (p=") {
		t.Errorf("base IR order: err = %v\n%s", err, buf.String())
	}
	var names []string
	for _, s := range Systems(Stats{}, nil, nil, nil, nil) {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, SystemNames()) {
		t.Errorf("Systems are %q, SystemNames %q", names, SystemNames())
	}
}

// TestIndexListsRefusesAnotherCorpus: candidates from an index that holds
// none of the data's documents would all be unjudged; that is an error,
// not a table of zeros.
func TestIndexListsRefusesAnotherCorpus(t *testing.T) {
	ctx := context.Background()
	idx, err := index.Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if err := idx.Add(ctx, []dataset.Doc{{ID: "x1", Text: "bank account"}, {ID: "x2", Text: "visa office"}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	ds := &dataset.Dataset{Dir: "data", Queries: []dataset.Query{{ID: "q1", Text: "bank"}},
		Corpus: []dataset.Doc{{ID: "d1", Text: "bank loan"}}, Qrels: dataset.Qrels{"q1": {"d1": 1}}}
	if _, err := IndexLists(ctx, idx, ds, 10); err == nil || !strings.Contains(err.Error(), "is it an index of another corpus") {
		t.Errorf("err = %v, want one saying the index holds none of the data's documents", err)
	}
	if err := idx.Add(ctx, ds.Corpus, nil, nil); err != nil {
		t.Fatal(err)
	}
	lists, err := IndexLists(ctx, idx, ds, 10)
	if err != nil || len(lists["q1"]) != 2 {
		t.Errorf("with the data's documents indexed: %v, %v", lists, err)
	}
}

func TestListsMissing(t *testing.T) {
	q := dataset.Qrels{}
	q.Add("q1", "d1", 1)
	q.Add("q2", "d2", 1)
	q.Add("q3", "d3", 0)
	tests := []struct {
		name  string
		lists Lists
		want  int
	}{
		{"all have candidates", Lists{"q1": {{ID: "d1"}}, "q2": {{ID: "d9"}}, "q3": {{ID: "d3"}}}, 0},
		{"one empty, one absent", Lists{"q1": {{ID: "d1"}}, "q2": {}}, 2},
		{"unjudged lists do not count", Lists{"q9": {{ID: "d1"}}}, 3},
		{"none", nil, 3},
	}
	for _, tc := range tests {
		if got := tc.lists.Missing(q); got != tc.want {
			t.Errorf("%s: Missing = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestCompareRanksByMeaning runs every system over given lists whose
// relevant candidates share the query's group of words (ssgtest's two
// well-separated groups) but none of its words: the lexical systems
// cannot find them, WMD and both SSG variants rank them first, the IR
// order stays the given one, SSG-WD's convergence is counted per query,
// and a query without judgments is not scored.
func TestCompareRanksByMeaning(t *testing.T) {
	v, tm := ssgtest.Fixture(t)
	space := wmd.NewSpace(v)
	wd, err := ssg.New(space, tm, ssg.Config{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	d, err := ssg.New(space, tm, ssg.Config{K: 2, Dropout: 0.5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{
		"s1": "desert sand", "s2": "camping beach", "s3": "sand camping",
		"m1": "salary account", "m2": "account salary", "m3": "salary",
	}
	ds := &dataset.Dataset{
		Queries: []dataset.Query{{ID: "money", Text: "bank loan"}, {ID: "trip", Text: "beach desert"}, {ID: "unjudged", Text: "bank"}},
		Qrels:   dataset.Qrels{},
	}
	for _, id := range slices.Sorted(maps.Keys(docs)) {
		ds.Corpus = append(ds.Corpus, dataset.Doc{ID: id, Text: docs[id]})
	}
	given := dataset.NewRun()
	for q, order := range map[string][]string{
		"money":    {"s1", "s2", "s3", "m1", "m2", "m3"},
		"trip":     {"m1", "m2", "s3", "m3", "s1", "s2"},
		"unjudged": {"s1", "m1"},
	} {
		for i, id := range order {
			given.Add(q, dataset.Entry{DocID: id, Rank: i + 1, Score: float64(len(order) - i)})
		}
	}
	ds.Candidates = &given
	for _, id := range []string{"m1", "m2", "m3"} {
		ds.Qrels.Add("money", id, 1)
	}
	for _, id := range []string{"s1", "s2", "s3"} {
		ds.Qrels.Add("trip", id, 1)
	}
	ds.Qrels.Add("trip", "m1", 0)
	ds = JudgedOnly(ds)
	if len(ds.Queries) != 2 {
		t.Fatalf("JudgedOnly kept %d queries, want 2", len(ds.Queries))
	}
	lists, err := GivenLists(ds)
	if err != nil {
		t.Fatal(err)
	}
	var conv Convergence
	rows, err := Compare(context.Background(), ds, lists, Systems(CorpusStats(ds.Corpus), space, wd, d, &conv), eval.MustParseMetrics("map@10,p@1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rows {
		got[r.Name] = r.Result.Mean[0]
		if r.Fallbacks != 0 {
			t.Errorf("%s kept %d queries in first-stage order", r.Name, r.Fallbacks)
		}
	}
	if want := SystemNames(); !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for _, name := range []string{"WMD", "SSG-WD", "SSG-D"} {
		if got[name] != 1 {
			t.Errorf("%s MAP@10 %.4f, want 1: it ranks by meaning", name, got[name])
		}
	}
	if ir := got["IR order"]; math.Abs(ir-0.3972) > 1e-3 {
		t.Errorf("IR order MAP@10 %.4f, want the given order's 0.3972", ir)
	}
	if conv.Total != 2 {
		t.Errorf("convergence counted over %d queries, want 2", conv.Total)
	}
}
