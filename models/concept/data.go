package concept

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/semrank/semrank/dataset"
)

// Judged is one query with its judged candidates, in first-stage order:
// the supervised signal (preference pairs, triples) and the unit of
// evaluation.
type Judged struct {
	QueryID string
	Query   string
	DocIDs  []string
	Docs    []string // candidate texts, parallel to DocIDs
	Grades  []int    // relevance grade of each candidate; > 0 is relevant
	Scores  []float64
	// Scores are the first-stage scores (higher is better), for fusion.
}

// Pair is two texts known to be about the same thing (a question's subject
// and body, a question and a good answer): S2Net's comparable pairs.
type Pair struct{ A, B string }

// Data is everything a concept model may learn from.
type Data struct {
	Texts []string // unlabelled texts: vocabulary, LSA, RBM pretraining
	Lists []Judged // judged candidate lists
	Pairs []Pair   // comparable pairs
}

// JudgedLists builds one Judged per query of a dataset: its candidates
// (candidates.trec, in the given order) with grades from the judgments
// (unjudged candidates count as not relevant). Without candidates.trec
// the judged documents of each query are its candidates.
func JudgedLists(ds *dataset.Dataset) ([]Judged, error) {
	if ds.Qrels == nil {
		return nil, fmt.Errorf("concept: %s has no judgments (qrels/test.tsv)", ds.Dir)
	}
	var out []Judged
	for _, q := range ds.Queries {
		j := Judged{QueryID: q.ID, Query: q.FullText()}
		if ds.Candidates != nil {
			for _, e := range ds.Candidates.Ranking(q.ID) {
				j.DocIDs = append(j.DocIDs, e.DocID)
				j.Scores = append(j.Scores, e.Score)
			}
		} else {
			for _, id := range dataset.SortedKeys(ds.Qrels[q.ID]) {
				j.DocIDs = append(j.DocIDs, id)
				j.Scores = append(j.Scores, 0)
			}
		}
		if len(j.DocIDs) == 0 {
			continue
		}
		for _, id := range j.DocIDs {
			d, ok := ds.Doc(id)
			if !ok {
				return nil, fmt.Errorf("concept: %s: unknown document %q", ds.Dir, id)
			}
			j.Docs = append(j.Docs, d.FullText())
			j.Grades = append(j.Grades, ds.Qrels[q.ID][id])
		}
		out = append(out, j)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("concept: %s has no query with candidates", ds.Dir)
	}
	return out, nil
}

// HasPreference reports whether a list has both a relevant and a
// non-relevant candidate, i.e. yields at least one preference pair.
func (j Judged) HasPreference() bool {
	rel, non := false, false
	for _, g := range j.Grades {
		if g > 0 {
			rel = true
		} else {
			non = true
		}
	}
	return rel && non
}

// AddCorpus adds a dataset's texts (documents and queries) to the
// unlabelled texts, and its comparable pairs: the title and body of every
// document and query that has both, and, when withQrels is true, each
// query with each document judged relevant to it.
func (d *Data) AddCorpus(ds *dataset.Dataset, withQrels bool) {
	for _, doc := range ds.Corpus {
		d.Texts = append(d.Texts, doc.FullText())
		if doc.Title != "" && doc.Text != "" {
			d.Pairs = append(d.Pairs, Pair{A: doc.Title, B: doc.Text})
		}
	}
	for _, q := range ds.Queries {
		d.Texts = append(d.Texts, q.FullText())
		if q.Title != "" && q.Text != "" {
			d.Pairs = append(d.Pairs, Pair{A: q.Title, B: q.Text})
		}
	}
	if !withQrels || ds.Qrels == nil {
		return
	}
	for _, q := range ds.Queries {
		for _, id := range dataset.SortedKeys(ds.Qrels[q.ID]) {
			if ds.Qrels[q.ID][id] <= 0 {
				continue
			}
			if doc, ok := ds.Doc(id); ok {
				d.Pairs = append(d.Pairs, Pair{A: q.FullText(), B: doc.FullText()})
			}
		}
	}
}

// Split divides lists at random (seeded) into a training part and a
// held-out part of about frac of the lists, for early stopping. Both parts
// keep at least one list when there are two or more.
func Split(lists []Judged, frac float64, seed uint64) (train, held []Judged) {
	if len(lists) < 2 || frac <= 0 {
		return lists, nil
	}
	perm := rand.New(rand.NewPCG(seed, 0x5eed)).Perm(len(lists))
	n := int(frac*float64(len(lists)) + 0.5)
	n = max(1, min(n, len(lists)-1))
	for i, p := range perm {
		if i < n {
			held = append(held, lists[p])
		} else {
			train = append(train, lists[p])
		}
	}
	return train, held
}

// Folds divides lists into k folds of consecutive queries after a seeded
// shuffle; fold i is the test part of the i-th cross-validation split.
func Folds(lists []Judged, k int, seed uint64) ([][]Judged, error) {
	if k < 2 || k > len(lists) {
		return nil, fmt.Errorf("concept: cannot make %d folds of %d queries", k, len(lists))
	}
	perm := rand.New(rand.NewPCG(seed, 0xf01d)).Perm(len(lists))
	folds := make([][]Judged, k)
	for i, p := range perm {
		folds[i%k] = append(folds[i%k], lists[p])
	}
	return folds, nil
}

// ErrNoSignal is returned by trainers given no usable supervision.
var ErrNoSignal = errors.New("concept: no training signal (no list with both a relevant and a non-relevant candidate, and no comparable pairs)")

// LoadDir reads a BEIR directory as training data: its judged lists and,
// as unlabelled texts and comparable pairs, its documents and queries
// (see AddCorpus; withQrels adds query–relevant-document pairs).
func LoadDir(dir string, withQrels bool) (Data, *dataset.Dataset, error) {
	ds, err := dataset.Load(dir)
	if err != nil {
		return Data{}, nil, err
	}
	lists, err := JudgedLists(ds)
	if err != nil {
		return Data{}, nil, err
	}
	d := Data{Lists: lists}
	d.AddCorpus(ds, withQrels)
	return d, ds, nil
}
