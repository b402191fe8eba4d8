package tweak

import (
	"sync"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// testDir holds a few SemEval-2016 subtask B queries with their candidates.
const testDir = "../../testdata/tweak"

var (
	loadOnce sync.Once
	testDS   *dataset.Dataset
	loadErr  error
)

func testData(t testing.TB) *dataset.Dataset {
	t.Helper()
	loadOnce.Do(func() { testDS, loadErr = dataset.Load(testDir) })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return testDS
}

// corpusDF counts document frequencies over the dataset's corpus.
func corpusDF(ds *dataset.Dataset) *DFTable {
	texts := make([]string, len(ds.Corpus))
	for i, d := range ds.Corpus {
		texts[i] = d.FullText()
	}
	return CountDF(texts)
}

func queryLog(ds *dataset.Dataset) *DFTable {
	texts := make([]string, len(ds.Queries))
	for i, q := range ds.Queries {
		texts[i] = q.FullText()
	}
	return CountDF(texts)
}

func testSet(t testing.TB, withLog bool) *Set {
	t.Helper()
	ds := testData(t)
	st := Stats{DF: corpusDF(ds)}
	if withLog {
		st.QF = queryLog(ds)
	}
	s, err := NewSet(ds, nil, st, withLog)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sharedSet is testSet with every query ranking every candidate document
// of the test data.
func sharedSet(t testing.TB) *Set {
	s, _ := sharedSetData(t)
	return s
}

// sharedSetData returns sharedSet and the dataset it was made from.
func sharedSetData(t testing.TB) (*Set, *dataset.Dataset) {
	t.Helper()
	ds := *testData(t)
	var docs []string
	seen := map[string]bool{}
	for _, qid := range ds.Candidates.QueryIDs() {
		for _, e := range ds.Candidates.Ranking(qid) {
			if !seen[e.DocID] {
				seen[e.DocID] = true
				docs = append(docs, e.DocID)
			}
		}
	}
	run := dataset.NewRun()
	for _, qid := range ds.Candidates.QueryIDs() {
		for i, d := range docs {
			run.Add(qid, dataset.Entry{DocID: d, Score: float64(len(docs) - i), Rank: i + 1})
		}
	}
	ds.Candidates = &run
	shared := ds.WithUnjudgedNotRelevant()
	s, err := NewSet(shared, nil, Stats{DF: corpusDF(&ds), QF: queryLog(&ds)}, true)
	if err != nil {
		t.Fatal(err)
	}
	return s, shared
}
