package recipe

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
)

func TestSentences(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ", nil},
		{"One. Two? Three!", []string{"One.", "Two?", "Three!"}},
		{"no end mark", []string{"no end mark"}},
		{"version 2.6 of bleve. next", []string{"version 2.6 of bleve.", "next"}},
		{"line one\nline two.\n\nthree", []string{"line one", "line two.", "three"}},
		{"U.S . FIRST", []string{"U.S .", "FIRST"}},
	} {
		if got := Sentences(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Sentences(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzSentences: the pieces are trimmed, non-empty, and hold every
// non-space byte of the text, in order.
func FuzzSentences(f *testing.F) {
	for _, s := range []string{"", "a. b", "x!\n?y", ". . .", "end.\r\nnext"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := Sentences(text)
		for _, s := range got {
			if s == "" || s != strings.TrimSpace(s) {
				t.Fatalf("piece %q empty or untrimmed", s)
			}
		}
		strip := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if a, b := strip(strings.Join(got, " ")), strip(text); a != b {
			t.Fatalf("pieces %q lose text: %q vs %q", got, a, b)
		}
	})
}

func pseudoCorpus() []dataset.Doc {
	return []dataset.Doc{
		{ID: "t1", Title: "Sorting large files on tape", Text: "An external merge sort for magnetic tape drives is given. Runs are merged in passes. Each pass halves the number of runs on the tapes."},
		{ID: "t2", Title: "", Text: "Compilers translate programs written in high level languages. A parser reads the tokens of the source text first. Code generation follows the semantic analysis of the tree."},
		{ID: "t3", Title: "x", Text: "too short"},
		{ID: "t4", Title: "Hash tables with open addressing", Text: "Open addressing stores every key inside the table itself. Probing sequences decide where a colliding key goes next. Deletion needs tombstones."},
	}
}

func TestPseudo(t *testing.T) {
	corpus := pseudoCorpus()
	for _, tc := range []struct {
		name  string
		kinds []string
		want  map[string]string // query id → kind
	}{
		{"titles", []string{PseudoTitle}, map[string]string{"pq-t1": PseudoTitle, "pq-t4": PseudoTitle}},
		{"titles then sentences", []string{PseudoTitle, PseudoSentence}, map[string]string{"pq-t1": PseudoTitle, "pq-t2": PseudoSentence, "pq-t4": PseudoTitle}},
		{"sentences", []string{PseudoSentence}, map[string]string{"pq-t1": PseudoSentence, "pq-t2": PseudoSentence, "pq-t4": PseudoSentence}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := Pseudo(corpus, PseudoOptions{Kinds: tc.kinds})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, q := range ds.Queries {
				got[q.ID] = q.Metadata["kind"].(string)
				src := strings.TrimPrefix(q.ID, "pq-")
				if !reflect.DeepEqual(ds.Qrels[q.ID], map[string]int{src: 1}) {
					t.Errorf("%s: qrels %v, want its source document alone", q.ID, ds.Qrels[q.ID])
				}
				orig, _ := (&dataset.Dataset{Corpus: corpus}).Doc(src)
				rest, _ := ds.Doc(src)
				if strings.Contains(rest.FullText(), q.Text) {
					t.Errorf("%s: query %q still in its document %q", q.ID, q.Text, rest.FullText())
				}
				if !strings.Contains(orig.FullText(), q.Text) {
					t.Errorf("%s: query %q not from its document", q.ID, q.Text)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("queries %v, want %v", got, tc.want)
			}
			// The caller's corpus is not changed.
			if !reflect.DeepEqual(corpus, pseudoCorpus()) {
				t.Error("Pseudo changed the corpus it was given")
			}
		})
	}
}

func TestPseudoTermsAndSampling(t *testing.T) {
	var corpus []dataset.Doc
	for i := range 30 {
		w := []string{"merge", "parser", "hashing"}[i%3]
		corpus = append(corpus, dataset.Doc{ID: strings.Repeat("d", 1+i%5) + string(rune('a'+i)), Text: w + " " + w + " algorithm tape table " + w + "s analysis"})
	}
	ds, err := Pseudo(corpus, PseudoOptions{Kinds: []string{PseudoTerms}, Queries: 10, Terms: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Queries) != 10 {
		t.Fatalf("%d queries, want 10", len(ds.Queries))
	}
	for _, q := range ds.Queries {
		words := strings.Fields(q.Text)
		if len(words) != 3 || !slices.Contains([]string{"merge", "parser", "hashing"}, words[0]) {
			t.Errorf("terms query %q: want 3 words, the document's own topic word first", q.Text)
			continue
		}
		// Every occurrence of the query's words is cut, and only those.
		id := strings.TrimPrefix(q.ID, "pq-")
		orig, _ := (&dataset.Dataset{Corpus: corpus}).Doc(id)
		rest, _ := ds.Doc(id)
		var want []string
		for _, w := range strings.Fields(orig.Text) {
			if !slices.Contains(words, w) {
				want = append(want, w)
			}
		}
		if rest.Text != strings.Join(want, " ") || len(want) == 0 {
			t.Errorf("%s: %q left of %q for query %q", q.ID, rest.Text, orig.Text, q.Text)
		}
	}
	// The sample depends on the ids, not on the corpus order.
	rev := slices.Clone(corpus)
	slices.Reverse(rev)
	again, err := Pseudo(rev, PseudoOptions{Kinds: []string{PseudoTerms}, Queries: 10, Terms: 3})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(d *dataset.Dataset) []string {
		var out []string
		for _, q := range d.Queries {
			out = append(out, q.ID)
		}
		slices.Sort(out)
		return out
	}
	if !reflect.DeepEqual(ids(ds), ids(again)) {
		t.Errorf("sample changed with corpus order: %v vs %v", ids(ds), ids(again))
	}
}

func TestPseudoRefuses(t *testing.T) {
	for _, tc := range []struct {
		o    PseudoOptions
		want string
	}{
		{PseudoOptions{}, "no pseudo-query kind"},
		{PseudoOptions{Kinds: []string{"titles"}}, `unknown pseudo-query kind "titles"`},
		{PseudoOptions{Kinds: []string{PseudoTitle, PseudoTitle}}, "given twice"},
		{PseudoOptions{Kinds: []string{PseudoTitle}, Queries: -1}, "want ≥ 0"},
		{PseudoOptions{Kinds: []string{PseudoTitle}}, "no document of 1 gives a pseudo-query"},
	} {
		_, err := Pseudo([]dataset.Doc{{ID: "a", Text: "short"}}, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Pseudo(%+v) = %v, want an error containing %q", tc.o, err, tc.want)
		}
	}
}

// TestAddNeighbours: each pseudo-query's own document is grade 2 and the
// k documents nearest to it grade 1; here those share its topic, as
// every 8th document does.
func TestAddNeighbours(t *testing.T) {
	ds := sentenceData()
	pseudo, err := Pseudo(ds.Corpus, PseudoOptions{Kinds: []string{PseudoTitle}, Queries: 10})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := CorpusIndex(context.Background(), pseudo, "")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if err := addNeighbours(context.Background(), pseudo, ds, idx, 3); err != nil {
		t.Fatal(err)
	}
	for _, q := range pseudo.Queries {
		src := pseudoSource(q.ID)
		judged := pseudo.Qrels[q.ID]
		if judged[src] != 2 || len(judged) != 4 {
			t.Errorf("%s: judged %v, want %s grade 2 and 3 neighbours", q.ID, judged, src)
		}
		var n int
		fmt.Sscanf(src, "d%d", &n)
		for id, g := range judged {
			var m int
			fmt.Sscanf(id, "d%d", &m)
			if id != src && (g != 1 || m%8 != n%8) {
				t.Errorf("%s: neighbour %s grade %d, want grade 1 and the topic of %s", q.ID, id, g, src)
			}
		}
	}
}

// FuzzPseudo: any document text gives at most one pseudo-query per
// document, drawn from it, judged relevant to it alone, and never a
// panic.
func FuzzPseudo(f *testing.F) {
	f.Add("A title here", "One two three four five. Six seven eight nine ten. Eleven twelve thirteen fourteen fifteen.", "sentence")
	f.Add("", "word word word other thing stuff", "terms")
	f.Add("x y", "...", "title")
	f.Fuzz(func(t *testing.T, title, text, kind string) {
		corpus := []dataset.Doc{{ID: "a", Title: title, Text: text}, {ID: "b", Title: text, Text: title}, {ID: "c", Text: title + " " + text}}
		ds, err := Pseudo(corpus, PseudoOptions{Kinds: []string{kind}, Terms: 3})
		if err != nil {
			return
		}
		for _, q := range ds.Queries {
			src := pseudoSource(q.ID)
			orig, ok := (&dataset.Dataset{Corpus: corpus}).Doc(src)
			if !ok || len(ds.Qrels[q.ID]) != 1 || ds.Qrels[q.ID][src] != 1 {
				t.Fatalf("query %s: source %q, judged %v", q.ID, src, ds.Qrels[q.ID])
			}
			if kind != PseudoTerms && !strings.Contains(orig.FullText(), q.Text) {
				t.Fatalf("query %q not from %q", q.Text, orig.FullText())
			}
		}
	})
}
