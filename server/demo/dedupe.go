package demo

import (
	"github.com/semrank/semrank/dataset"
)

// dedupe returns ds with one document for each title and text the corpus
// holds more than once, and the number of documents it dropped. The
// SemEval data holds a forum question once per original question whose
// search returned it, under an id for each (Q268_R14 and Q269_R29 are
// one question), so a search of the whole corpus would show it twice.
// The first of its ids in corpus order stays; judgments and candidate
// lists naming another of them name it instead (a query judging two of
// them keeps the higher grade, and lists them once, at the first).
// ds itself is not changed.
func dedupe(ds *dataset.Dataset) (*dataset.Dataset, int) {
	type content struct{ title, text string }
	first := map[content]string{} // content → the id kept
	same := map[string]string{}   // a dropped id → the id kept
	out := &dataset.Dataset{Dir: ds.Dir, Queries: ds.Queries}
	for _, d := range ds.Corpus {
		c := content{d.Title, d.Text}
		if id, ok := first[c]; ok {
			same[d.ID] = id
			continue
		}
		first[c] = d.ID
		out.Corpus = append(out.Corpus, d)
	}
	if len(same) == 0 {
		return ds, 0
	}
	kept := func(id string) string {
		if k, ok := same[id]; ok {
			return k
		}
		return id
	}
	if ds.Qrels != nil {
		out.Qrels = dataset.Qrels{}
		for qid, judged := range ds.Qrels {
			m := make(map[string]int, len(judged))
			for id, g := range judged {
				k := kept(id)
				if old, ok := m[k]; !ok || g > old {
					m[k] = g
				}
			}
			out.Qrels[qid] = m
		}
	}
	if ds.Candidates != nil {
		run := dataset.NewRun()
		for _, qid := range ds.Candidates.QueryIDs() {
			seen := map[string]bool{}
			for _, e := range ds.Candidates.Ranking(qid) {
				e.DocID = kept(e.DocID)
				if !seen[e.DocID] {
					seen[e.DocID] = true
					run.Add(qid, e)
				}
			}
		}
		run.File = ds.Candidates.File
		out.Candidates = &run
	}
	return out, len(same)
}
