package cluster

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/testdata"
)

// demoIndexes builds, from the demo corpus, one index of every document
// and n shards of it, each compacted as semrank index leaves it.
func demoIndexes(t testing.TB, n int) (whole *index.Index, shards []*index.Index, ds *dataset.Dataset) {
	t.Helper()
	ds, err := dataset.LoadFS(testdata.Demo, testdata.DemoDir)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	build := func(name string, keep func(dataset.Doc) bool) *index.Index {
		idx, err := index.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { idx.Close() })
		var docs []dataset.Doc
		for _, d := range ds.Corpus {
			if keep(d) {
				docs = append(docs, d)
			}
		}
		ctx := context.Background()
		if err := idx.Add(ctx, docs, []index.PayloadEncoder{index.TermsEncoder{}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := idx.Compact(ctx); err != nil {
			t.Fatal(err)
		}
		return idx
	}
	whole = build("whole", func(dataset.Doc) bool { return true })
	for s := range n {
		shards = append(shards, build(fmt.Sprint("shard", s), func(d dataset.Doc) bool { return Of(d.ID, n) == s }))
	}
	return whole, shards, ds
}

// collectionStats sums the shards' presearch statistics for q, with each
// field's dictionary size that of the union of theirs.
func collectionStats(t testing.TB, shards []*index.Index, req *bleve.SearchRequest) *Stats {
	t.Helper()
	sum := &Stats{}
	for _, s := range shards {
		st, err := Presearch(context.Background(), s, req.Query)
		if err != nil {
			t.Fatal(err)
		}
		sum.add(st)
	}
	for name, f := range sum.Fields {
		union := map[string]bool{}
		for _, s := range shards {
			if err := Terms(s, name, func(term string) error { union[term] = true; return nil }); err != nil {
				t.Fatal(err)
			}
		}
		f.Terms = len(union)
	}
	return sum
}

// TestWithStatsScoresAsOneIndex: shards searched with the collection's
// statistics give every document the score one index of all of them
// gives it; with their own statistics they do not.
func TestWithStatsScoresAsOneIndex(t *testing.T) {
	whole, shards, ds := demoIndexes(t, 3)
	differ := 0
	for _, q := range ds.Queries {
		tq, err := index.TextQuery(q.Text)
		if err != nil {
			t.Fatal(err)
		}
		req := bleve.NewSearchRequestOptions(tq, 1000, 0, false)
		want, err := whole.Search(req)
		if err != nil {
			t.Fatal(err)
		}
		stats := collectionStats(t, shards, req)
		got := map[string]float64{}
		local := map[string]float64{}
		for _, s := range shards {
			res, err := s.Search(WithStats(req, stats))
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				got[h.ID] = h.Score
			}
			res, err = s.Search(req)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				local[h.ID] = h.Score
			}
		}
		if len(got) != len(want.Hits) {
			t.Fatalf("query %s: %d hits on the shards, %d on one index", q.ID, len(got), len(want.Hits))
		}
		for _, h := range want.Hits {
			if math.Abs(got[h.ID]-h.Score) > 1e-9 {
				t.Fatalf("query %s: %s scores %v on its shard, %v on one index", q.ID, h.ID, got[h.ID], h.Score)
			}
			if math.Abs(local[h.ID]-h.Score) > 1e-9 {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Error("the shards' own statistics scored every document as one index does: the test shows nothing")
	}
}

// TestPresearchCounts: a shard's presearch counts its documents and the
// documents holding each of the query's terms, absent terms included.
func TestPresearchCounts(t *testing.T) {
	whole, _, _ := demoIndexes(t, 1)
	tq, err := index.TextQuery("bank visa zzzunseen bank") // a term twice is counted once
	if err != nil {
		t.Fatal(err)
	}
	st, err := Presearch(context.Background(), whole, tq)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := whole.DocCount()
	f := st.Fields[index.FieldAll]
	if st.Docs != n || f == nil || f.Terms == 0 {
		t.Fatalf("presearch = %+v (docs %d)", st, n)
	}
	terms := make([]string, 0, len(f.DocFreq))
	for term := range f.DocFreq {
		terms = append(terms, term)
	}
	sort.Strings(terms)
	if fmt.Sprint(terms) != "[bank visa zzzunseen]" {
		t.Fatalf("terms %v", terms)
	}
	for term, df := range f.DocFreq {
		want, err := whole.DocFreq(term)
		if err != nil || df != want {
			t.Errorf("df(%s) = %d, want %d (%v)", term, df, want, err)
		}
	}
}

// TestQueryTerms: the coordinator finds a query's terms as a shard's
// presearch does, except for queries whose terms the shards' dictionaries
// decide.
func TestQueryTerms(t *testing.T) {
	whole, _, _ := demoIndexes(t, 1)
	m := whole.Mapping()
	tq, err := index.TextQuery("banks in Doha and the bank")
	if err != nil {
		t.Fatal(err)
	}
	phrase := bleve.NewMatchPhraseQuery("visa renewal")
	phrase.SetField(index.FieldText)
	for _, tt := range []struct {
		name string
		q    query.Query
		ok   bool
	}{
		{"match", tq, true},
		{"phrase and term", bleve.NewDisjunctionQuery(phrase, bleve.NewTermQuery("qatar")), true},
		{"prefix", bleve.NewPrefixQuery("ban"), false},
		{"fuzzy", bleve.NewFuzzyQuery("bnak"), false},
	} {
		got, ok := queryTerms(tt.q, m)
		if ok != tt.ok {
			t.Errorf("%s: ok %v", tt.name, ok)
			continue
		}
		if !ok {
			continue
		}
		st, err := Presearch(context.Background(), whole, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		for field, f := range st.Fields {
			for term := range f.DocFreq {
				if !slices.Contains(got[field], term) {
					t.Errorf("%s: the presearch reads %s:%s, queryTerms has %v", tt.name, field, term, got)
				}
			}
		}
		for field, terms := range got {
			for _, term := range terms {
				if _, ok := st.Fields[field].DocFreq[term]; !ok {
					t.Errorf("%s: queryTerms has %s:%s, the presearch does not", tt.name, field, term)
				}
			}
		}
	}
}
