package dataset

import (
	"fmt"
	"reflect"
	"strings"
)

// Merge returns one dataset holding the corpora, queries, judgments and
// candidate lists of sets, in their order, so that a trainer given several
// directories learns from them as from one. A document two sets hold is
// kept once; a document or query id that two sets give different content,
// and a query two sets both hold, are errors, as is a mix of sets with and
// without judgments or candidate lists. One set is returned as it is.
func Merge(sets ...*Dataset) (*Dataset, error) {
	if len(sets) == 0 {
		return nil, fmt.Errorf("eval: merging no datasets")
	}
	if len(sets) == 1 {
		return sets[0], nil
	}
	dirs := make([]string, len(sets))
	for i, s := range sets {
		dirs[i] = s.Dir
		if (s.Qrels == nil) != (sets[0].Qrels == nil) {
			return nil, fmt.Errorf("eval: merging %s and %s: one has judgments, the other none", sets[0].Dir, s.Dir)
		}
		if (s.Candidates == nil) != (sets[0].Candidates == nil) {
			return nil, fmt.Errorf("eval: merging %s and %s: one has candidate lists, the other none", sets[0].Dir, s.Dir)
		}
	}
	out := &Dataset{Dir: strings.Join(dirs, "+")}
	if sets[0].Qrels != nil {
		out.Qrels = Qrels{}
	}
	if sets[0].Candidates != nil {
		run := NewRun()
		out.Candidates = &run
	}
	docFrom := map[string]*Dataset{}
	queryFrom := map[string]*Dataset{}
	for _, s := range sets {
		for _, d := range s.Corpus {
			if prev, ok := docFrom[d.ID]; ok {
				if p, _ := prev.Doc(d.ID); !reflect.DeepEqual(p, d) {
					return nil, fmt.Errorf("eval: merging %s and %s: document %q differs", prev.Dir, s.Dir, d.ID)
				}
				continue
			}
			docFrom[d.ID] = s
			out.Corpus = append(out.Corpus, d)
		}
		for _, q := range s.Queries {
			if prev, ok := queryFrom[q.ID]; ok {
				return nil, fmt.Errorf("eval: merging %s and %s: both hold query %q", prev.Dir, s.Dir, q.ID)
			}
			queryFrom[q.ID] = s
			out.Queries = append(out.Queries, q)
		}
		for qid, judged := range s.Qrels {
			out.Qrels[qid] = judged
		}
		if s.Candidates != nil {
			for _, qid := range s.Candidates.QueryIDs() {
				out.Candidates.Set(qid, s.Candidates.Ranking(qid))
			}
		}
	}
	return out, nil
}
