package recipe

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
)

// Kinds of pseudo-query (PseudoOptions.Kinds).
const (
	// PseudoTitle asks a document's title for its body: the title is the
	// query, and the document keeps its text alone.
	PseudoTitle = "title"
	// PseudoSentence asks one sentence of a document for the rest of it
	// (the inverse cloze task): the sentence is the query and is cut
	// from the document.
	PseudoSentence = "sentence"
	// PseudoTerms asks a document's most salient words (tf·idf over the
	// corpus) for the document without them: every occurrence is cut.
	PseudoTerms = "terms"
)

// PseudoKinds are the pseudo-query kinds, in the order the recipe prefers
// them by default.
var PseudoKinds = []string{PseudoTitle, PseudoSentence, PseudoTerms}

// DefaultPseudoQueries is how many pseudo-queries Pseudo draws by
// default: enough for Select's paired tests to see a gain of a few points
// of MAP, few enough that scoring them with every stage (exact WMD above
// all) takes minutes on two cores for the development collections.
const DefaultPseudoQueries = 100

// DefaultPseudoNeighbours is the number of weakly relevant neighbours
// an unsupervised BEIR run gives each pseudo-query by default
// (PseudoOptions.Neighbours): on MED, with none, no stage beat BM25 on
// the pseudo-queries and the recipe kept none; with 5 the recipe kept
// rm3, +0.073 MAP over BM25 on MED's judged queries (docs/RESULTS.md).
const DefaultPseudoNeighbours = 5

// PseudoOptions configure Pseudo.
type PseudoOptions struct {
	// Kinds are the pseudo-query kinds to draw, in order of preference:
	// each sampled document gives one query, of the first kind it can
	// (a document without a title cannot give a title query).
	Kinds []string
	// Queries is the most pseudo-queries to draw; DefaultPseudoQueries
	// when zero.
	Queries int
	// Terms is the number of words of a PseudoTerms query; 6 when zero.
	Terms int
	// Neighbours, when positive, makes the documents nearest to each
	// pseudo-query's own weakly relevant too (see addNeighbours).
	Neighbours int
	Seed       uint64
}

// Sentence lengths, in words, that make a pseudo-query: shorter ones say
// too little to find their document by, longer ones are paragraphs.
const (
	minSentenceWords = 5
	maxSentenceWords = 40
)

// CheckPseudoKinds refuses unknown or repeated kinds and an empty list.
func CheckPseudoKinds(kinds []string) error {
	if len(kinds) == 0 {
		return fmt.Errorf("recipe: no pseudo-query kind (%s)", strings.Join(PseudoKinds, ", "))
	}
	for i, k := range kinds {
		if !slices.Contains(PseudoKinds, k) {
			return fmt.Errorf("recipe: unknown pseudo-query kind %q (%s)", k, strings.Join(PseudoKinds, ", "))
		}
		if slices.Contains(kinds[:i], k) {
			return fmt.Errorf("recipe: pseudo-query kind %q given twice", k)
		}
	}
	return nil
}

// Pseudo draws pseudo-queries from corpus and returns them as a judged
// dataset: each query's one relevant document is the document it was
// drawn from. Its corpus is corpus with what each query was cut from
// removed (a title query's document loses its title, a sentence query's
// the sentence, a terms query's those words), so that a model trained on it learns to match the query
// to the rest of the document, not to find the query's own words again.
// Documents are sampled by a hash of their id and the seed, so the same
// corpus gives the same queries in any order. Query ids are "pq-" and the
// document's id, with the kind in the query's metadata ("kind").
func Pseudo(corpus []dataset.Doc, o PseudoOptions) (*dataset.Dataset, error) {
	if err := CheckPseudoKinds(o.Kinds); err != nil {
		return nil, err
	}
	if o.Queries < 0 || o.Terms < 0 {
		return nil, fmt.Errorf("recipe: pseudo-queries %d, terms %d: want ≥ 0 (0 means the default)", o.Queries, o.Terms)
	}
	if o.Queries == 0 {
		o.Queries = DefaultPseudoQueries
	}
	if o.Terms == 0 {
		o.Terms = 6
	}
	var df map[string]int
	if slices.Contains(o.Kinds, PseudoTerms) {
		df = wordDocFreq(corpus)
	}
	order := make([]int, len(corpus))
	for i := range order {
		order[i] = i
	}
	key := func(i int) uint64 { return hashOf(o.Seed, corpus[i].ID) }
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(key(a), key(b)), cmp.Compare(corpus[a].ID, corpus[b].ID))
	})
	out := &dataset.Dataset{Dir: "pseudo-queries of " + corpusName(corpus), Corpus: slices.Clone(corpus), Qrels: dataset.Qrels{}}
	pos := make(map[string]int, len(corpus))
	for i, d := range corpus {
		pos[d.ID] = i
	}
	for _, i := range order {
		if len(out.Queries) == o.Queries {
			break
		}
		d := corpus[i]
		for _, kind := range o.Kinds {
			q, rest, ok := pseudoQuery(kind, d, df, len(corpus), o)
			if !ok {
				continue
			}
			qid := pseudoPrefix + d.ID
			out.Queries = append(out.Queries, dataset.Query{ID: qid, Text: q, Metadata: map[string]any{"kind": kind}})
			out.Qrels[qid] = map[string]int{d.ID: 1}
			out.Corpus[pos[d.ID]] = rest
			break
		}
	}
	if len(out.Queries) == 0 {
		return nil, fmt.Errorf("recipe: no document of %d gives a pseudo-query of kind %s", len(corpus), strings.Join(o.Kinds, " or "))
	}
	return out, nil
}

const pseudoPrefix = "pq-"

// pseudoSource returns the id of the document the pseudo-query qid was
// drawn from.
func pseudoSource(qid string) string { return strings.TrimPrefix(qid, pseudoPrefix) }

// corpusName names a corpus in messages by its first document.
func corpusName(corpus []dataset.Doc) string {
	if len(corpus) == 0 {
		return "an empty corpus"
	}
	return fmt.Sprintf("%d documents (first %q)", len(corpus), corpus[0].ID)
}

// pseudoQuery returns d's pseudo-query of the kind and d as it stays in
// the training corpus, or false when d gives none of that kind.
func pseudoQuery(kind string, d dataset.Doc, df map[string]int, n int, o PseudoOptions) (query string, rest dataset.Doc, ok bool) {
	rest = d
	switch kind {
	case PseudoTitle:
		if len(analyzers.Words(d.Title)) < 2 || len(strings.Fields(d.Text)) < minSentenceWords {
			return "", d, false
		}
		rest.Title = ""
		return d.Title, rest, true
	case PseudoSentence:
		sents := Sentences(d.Text)
		var usable []int
		for i, s := range sents {
			if w := len(strings.Fields(s)); w >= minSentenceWords && w <= maxSentenceWords {
				usable = append(usable, i)
			}
		}
		// The document keeps at least two sentences once one is cut.
		if len(usable) == 0 || len(sents) < 3 {
			return "", d, false
		}
		pick := usable[hashOf(o.Seed+1, d.ID)%uint64(len(usable))]
		rest.Text = strings.Join(slices.Delete(slices.Clone(sents), pick, pick+1), " ")
		return sents[pick], rest, true
	case PseudoTerms:
		terms := salientWords(d.FullText(), df, n, o.Terms)
		if len(terms) < min(o.Terms, 3) {
			return "", d, false
		}
		rest.Title, rest.Text = withoutWords(d.Title, terms), withoutWords(d.Text, terms)
		return strings.Join(terms, " "), rest, true
	}
	return "", d, false
}

// Sentences splits text after each '.', '?' or '!' followed by white
// space, and at line ends, dropping empty pieces; a sentence keeps its
// end mark.
func Sentences(text string) []string {
	var out []string
	start := 0
	flush := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			flush(i + 1)
		case '.', '?', '!':
			if i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\t' || text[i+1] == '\r' || text[i+1] == '\n' {
				flush(i + 1)
			}
		}
	}
	flush(len(text))
	return out
}

// withoutWords returns text without the white-space separated tokens
// whose analyzed words (analyzers.Words) are all in words.
func withoutWords(text string, words []string) string {
	var kept []string
	for _, tok := range strings.Fields(text) {
		ws := analyzers.Words(tok)
		if len(ws) > 0 && !slices.ContainsFunc(ws, func(w string) bool { return !slices.Contains(words, w) }) {
			continue
		}
		kept = append(kept, tok)
	}
	return strings.Join(kept, " ")
}

// wordDocFreq counts, for each unstemmed word, the documents holding it.
func wordDocFreq(corpus []dataset.Doc) map[string]int {
	df := map[string]int{}
	for _, d := range corpus {
		seen := map[string]bool{}
		for _, w := range analyzers.Words(d.FullText()) {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
	}
	return df
}

// salientWords returns text's k words of highest tf·idf, idf = log(n/df),
// skipping words of one or two letters and words in a single document
// (typos and numbers a query would not hold); ties go to the word first
// in text.
func salientWords(text string, df map[string]int, n, k int) []string {
	tf := map[string]int{}
	var order []string
	for _, w := range analyzers.Words(text) {
		if len([]rune(w)) < 3 || df[w] < 2 {
			continue
		}
		if tf[w] == 0 {
			order = append(order, w)
		}
		tf[w]++
	}
	weight := func(w string) float64 { return float64(tf[w]) * math.Log(float64(n)/float64(df[w])) }
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(weight(b), weight(a)) })
	return order[:min(k, len(order))]
}

// hashOf hashes id with seed (FNV-1a), for deterministic sampling.
func hashOf(seed uint64, id string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s", seed, id)
	return h.Sum64()
}
