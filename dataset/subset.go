package dataset

import (
	"hash/fnv"
	"maps"
	"sort"
)

// Subset returns a dataset with only the queries keep accepts, with their
// judgments and candidates; the corpus is shared, since candidates of the
// kept queries may be any document.
func (ds *Dataset) Subset(keep func(qid string) bool) *Dataset {
	out := &Dataset{Dir: ds.Dir, Corpus: ds.Corpus, docIndex: ds.docIndex, indexedLen: ds.indexedLen}
	for _, q := range ds.Queries {
		if keep(q.ID) {
			out.Queries = append(out.Queries, q)
		}
	}
	if ds.Qrels != nil {
		out.Qrels = Qrels{}
		for qid, m := range ds.Qrels {
			if keep(qid) {
				out.Qrels[qid] = m
			}
		}
	}
	if ds.Candidates != nil {
		c := ds.Candidates.Filter(keep)
		out.Candidates = &c
	}
	return out
}

// WithUnjudgedNotRelevant returns ds with every candidate of a judged
// query that the query's judgments leave out judged not relevant (grade
// 0), as every metric but AUC counts it. Trainers that read judged
// candidates only (TWEAK's losses) need it over full-retrieval lists whose
// judgments name the relevant documents alone (CACM's, most BEIR sets'):
// without it they see no document not to rank. ds itself is returned when its lists are
// judged whole (SemEval's); it is never changed.
func (ds *Dataset) WithUnjudgedNotRelevant() *Dataset {
	if ds.Candidates == nil {
		return ds
	}
	var out Qrels
	for _, qid := range ds.Candidates.QueryIDs() {
		judged, ok := ds.Qrels[qid]
		if !ok {
			continue
		}
		for _, e := range ds.Candidates.Ranking(qid) {
			if _, ok := judged[e.DocID]; ok {
				continue
			}
			if out == nil {
				out = make(Qrels, len(ds.Qrels))
				for q, m := range ds.Qrels {
					out[q] = maps.Clone(m)
				}
			}
			out.add(qid, e.DocID, 0)
		}
	}
	if out == nil {
		return ds
	}
	c := *ds
	c.Qrels = out
	return &c
}

// Folds splits the dataset's judged queries into k folds, deterministically:
// queries are ordered by a hash of their id and dealt round-robin, so a
// query's fold does not depend on file order. It returns, per fold, the
// ids of its queries. k must be at least 1; Folds panics otherwise.
func (ds *Dataset) Folds(k int) [][]string {
	var ids []string
	for _, q := range ds.Queries {
		if ds.Qrels == nil || ds.Qrels[q.ID] != nil {
			ids = append(ids, q.ID)
		}
	}
	hash := func(s string) uint64 {
		h := fnv.New64a()
		h.Write([]byte(s))
		return h.Sum64()
	}
	sort.Slice(ids, func(i, j int) bool {
		hi, hj := hash(ids[i]), hash(ids[j])
		if hi != hj {
			return hi < hj
		}
		return ids[i] < ids[j]
	})
	folds := make([][]string, k)
	for i, id := range ids {
		folds[i%k] = append(folds[i%k], id)
	}
	for _, f := range folds {
		sort.Strings(f)
	}
	return folds
}

// InSet returns a keep function for Subset and Filter accepting ids.
func InSet(ids []string) func(string) bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return func(id string) bool { return m[id] }
}

// NotInSet returns a keep function rejecting ids.
func NotInSet(ids []string) func(string) bool {
	in := InSet(ids)
	return func(id string) bool { return !in(id) }
}
