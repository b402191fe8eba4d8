package deepmatch

import (
	"fmt"

	"github.com/semrank/semrank/dataset"
)

// Query is a query with its judged candidates, in text form: what training
// and evaluation read, independent of where the data came from.
type Query struct {
	ID    string
	Text  string
	Cands []Cand
}

// Cand is one candidate of a query.
type Cand struct {
	ID       string
	Text     string
	Meta     map[string]any // document metadata (e.g. SemEval's by_question_author)
	Relevant bool
}

// FromDataset returns the queries of ds that have both candidates and
// judgments, with candidates in the given (first-stage) order.
func FromDataset(ds *dataset.Dataset) ([]Query, error) {
	if ds.Candidates == nil {
		return nil, fmt.Errorf("deepmatch: %s has no candidates.trec", ds.Dir)
	}
	if ds.Qrels == nil {
		return nil, fmt.Errorf("deepmatch: %s has no judgments", ds.Dir)
	}
	var out []Query
	for _, qid := range ds.Candidates.QueryIDs() {
		judged, ok := ds.Qrels[qid]
		if !ok {
			continue
		}
		q, _ := ds.Query(qid)
		Q := Query{ID: qid, Text: q.FullText()}
		for _, e := range ds.Candidates.Ranking(qid) {
			d, _ := ds.Doc(e.DocID)
			Q.Cands = append(Q.Cands, Cand{ID: d.ID, Text: d.FullText(), Meta: d.Metadata, Relevant: judged[d.ID] > 0})
		}
		out = append(out, Q)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("deepmatch: %s has no judged query with candidates", ds.Dir)
	}
	return out, nil
}

// Qrels returns the judgments of qs in eval's form.
func Qrels(qs []Query) dataset.Qrels {
	q := dataset.Qrels{}
	for _, Q := range qs {
		for _, c := range Q.Cands {
			g := 0
			if c.Relevant {
				g = 1
			}
			q.Add(Q.ID, c.ID, g)
		}
	}
	return q
}

// Rerank scores every query's candidates with score and returns the run.
func Rerank(qs []Query, score func(Query) []float64) dataset.Run {
	run := dataset.NewRun()
	for _, Q := range qs {
		s := score(Q)
		for i, c := range Q.Cands {
			run.Add(Q.ID, dataset.Entry{DocID: c.ID, Score: s[i], Rank: i + 1})
		}
	}
	return run
}
