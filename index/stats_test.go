package index

import (
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"

	"github.com/semrank/semrank/dataset"
)

// TestStatsPlainIndex: over a plain Bleve index, terms are analyzed with
// the mapping's analyzer for the field (the standard one: lowercased,
// stop words out, not stemmed), and a term's document frequency counts
// the documents holding it in any field.
func TestStatsPlainIndex(t *testing.T) {
	idx, err := bleve.NewMemOnly(bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	for id, d := range map[string]map[string]any{
		"a": {"subject": "Banks in Doha", "body": "Which bank is best?"},
		"b": {"subject": "Visa", "body": "My visa and the bank"},
		"c": {"subject": "Banking", "body": "Visa renewal"},
	} {
		if err := idx.Index(id, d); err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewStats(idx, []string{"body", "subject"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Tokens("The Banks of Doha"), " "); got != "banks doha" {
		t.Errorf("Tokens = %q, want the standard analyzer's %q", got, "banks doha")
	}
	if n, err := s.DocCount(); err != nil || n != 3 {
		t.Fatalf("DocCount = %d, %v", n, err)
	}
	for term, want := range map[string]uint64{"bank": 2, "visa": 2, "banks": 1, "doha": 1, "banking": 1, "loan": 0} {
		if got, err := s.DocFreq(term); err != nil || got != want {
			t.Errorf("DocFreq(%q) = %d, %v; want %d", term, got, err, want)
		}
	}
	if _, err := NewStats(idx, []string{"body", "text"}); err == nil || !strings.Contains(err.Error(), "text") || !strings.Contains(err.Error(), "body, subject") {
		t.Errorf("a missing field: err = %v, want one naming it and the fields there are", err)
	}
}

// TestOpenAny opens a plain Bleve index as itself and a semrank index as
// an *Index.
func TestOpenAny(t *testing.T) {
	dir := t.TempDir()
	plain, err := bleve.New(dir+"/plain", bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	plain.Close()
	sem, err := Create(dir + "/semrank")
	if err != nil {
		t.Fatal(err)
	}
	sem.Close()
	got, err := OpenAny(dir + "/plain")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.(*Index); ok {
		t.Error("a plain index opened as a semrank index")
	}
	got.Close()
	if got, err = OpenAny(dir + "/semrank"); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.(*Index); !ok {
		t.Error("a semrank index opened as a plain one")
	}
	got.Close()
	if _, err := OpenAny(dir + "/none"); err == nil {
		t.Error("a missing folder opened")
	}
}

// TestCheckStored: fields indexed but not stored are an error saying to
// store them; stored ones, or an empty index, are not.
func TestCheckStored(t *testing.T) {
	m := bleve.NewIndexMapping()
	m.StoreDynamic = false
	unstored, err := bleve.NewMemOnly(m)
	if err != nil {
		t.Fatal(err)
	}
	defer unstored.Close()
	if err := CheckStored(unstored, "body"); err != nil {
		t.Errorf("empty index: %v", err)
	}
	if err := unstored.Index("a", map[string]any{"body": "bank in Doha"}); err != nil {
		t.Fatal(err)
	}
	if err := CheckStored(unstored, "body"); err == nil || !strings.Contains(err.Error(), "Store") {
		t.Errorf("unstored field: err = %v, want one saying to store it", err)
	}
	stored, err := bleve.NewMemOnly(bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	defer stored.Close()
	if err := stored.Index("a", map[string]any{"body": "bank in Doha"}); err != nil {
		t.Fatal(err)
	}
	if err := CheckStored(stored, "body", "subject"); err != nil {
		t.Errorf("stored field: %v", err)
	}
}

// TestStatsDocFreqFields: a term's document frequency is the largest of
// FieldAll's and the fields', read from FieldAll alone where the mapping
// puts every field into it (Bleve's default mapping; a field mapped with
// include_in_all), from every field where it may not (a field kept out of
// FieldAll, a type mapping). Over the demo corpus, every term of every
// field, each way DocFreq equals the largest of the three counts.
func TestStatsDocFreqFields(t *testing.T) {
	ds, err := dataset.Load("../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	explicit := func(include bool) *mapping.IndexMappingImpl {
		m := bleve.NewIndexMapping()
		text := bleve.NewTextFieldMapping()
		text.IncludeInAll = include
		m.DefaultMapping.AddFieldMappingsAt("text", text)
		return m
	}
	typed := bleve.NewIndexMapping()
	typed.AddDocumentMapping("post", bleve.NewDocumentMapping())
	for _, c := range []struct {
		name    string
		m       *mapping.IndexMappingImpl
		allOnly bool
	}{
		{"default", bleve.NewIndexMapping(), true},
		{"text in _all", explicit(true), true},
		{"text kept out of _all", explicit(false), false},
		{"type mapping", typed, false},
	} {
		idx, err := bleve.NewMemOnly(c.m)
		if err != nil {
			t.Fatal(err)
		}
		indexDocs(t, idx, ds.Corpus)
		fields := []string{"text", "title"}
		s, err := NewStats(idx, fields)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(s.dfFields) == 1; got != c.allOnly {
			t.Errorf("%s: FieldAll alone %v, want %v", c.name, got, c.allOnly)
		}
		var terms []string
		for _, f := range fields {
			dict, err := idx.FieldDict(f)
			if err != nil {
				t.Fatal(err)
			}
			for e, err := dict.Next(); e != nil && err == nil; e, err = dict.Next() {
				terms = append(terms, e.Term)
			}
			dict.Close()
		}
		if len(terms) == 0 {
			t.Fatalf("%s: no terms", c.name)
		}
		want, err := maxDocFreqs(idx, terms, FieldAll, "text", "title")
		if err != nil {
			t.Fatal(err)
		}
		for i, term := range terms {
			df, err := s.DocFreq(term)
			if err != nil {
				t.Fatal(err)
			}
			if df != want[i] {
				t.Fatalf("%s: %q in %d documents, want %d", c.name, term, df, want[i])
			}
		}
		idx.Close()
	}
}
