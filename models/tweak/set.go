package tweak

import (
	"errors"
	"fmt"
	"sort"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/models"
)

// Set is a featurized set of queries with their candidate lists: training
// examples for the losses and the lists a model is evaluated on.
//
// Every (query, candidate) pair is kept, in candidate-list order, so that
// evaluation sees the whole list; only judged pairs feed the losses.
type Set struct {
	stats Stats
	texts []setText
	// rows holds each distinct feature row once, NumFeatures values per
	// row; setText.row maps a text's terms to them. A document several
	// queries rank is featurized once per query (see NewSet), and all but
	// the rows of the terms that query contains come out the same, so on
	// collections whose queries share candidates (CACM's BM25 lists) the
	// forward pass computes under half the softplus and sigmoid values.
	rows    []float64
	rowOf   map[[NumFeatures]float64]int32 // built by addText, dropped after
	pairs   []pair
	prefs   [][2]int // pair indices (a, b): a is graded above b, same query
	queries []setQuery
	qrels   dataset.Qrels
	fp      string
}

type setText struct {
	raw Text
	row []int32 // per term in raw.Terms order, its feature row in Set.rows
}

type pair struct {
	q, d   int // text indices
	doc    string
	rank   int
	grade  int
	judged bool
	// shared lists the terms the query and the candidate share, as
	// flattened (query position, candidate position) pairs in term
	// order: every objective evaluation walks them twice (and Scores
	// once), and merging the two texts' terms by string each time took
	// a fifth of training.
	shared []int32
}

type setQuery struct {
	id         string
	begin, end int // pairs[begin:end]
}

// ErrNoCandidates is returned for a dataset without candidate lists.
var ErrNoCandidates = errors.New("tweak: dataset has no candidate lists (candidates.trec)")

// NewSet featurizes the queries qids of ds (all judged queries with
// candidates when qids is nil) with st. queryInLog says the queries are part
// of st.QF (the training queries serving as the query log): each query and
// its candidates are then featurized with that query left out of the log.
// Candidates a query's judgments leave out are in no loss; give
// ds.WithUnjudgedNotRelevant() to count them not relevant, as the metrics
// but AUC do (judgments that name the relevant documents alone leave no document
// not to rank otherwise).
func NewSet(ds *dataset.Dataset, qids []string, st Stats, queryInLog bool) (*Set, error) {
	if ds.Candidates == nil {
		return nil, ErrNoCandidates
	}
	if ds.Qrels == nil {
		return nil, fmt.Errorf("tweak: %s has no judgments (qrels/test.tsv)", ds.Dir)
	}
	if st.DF == nil {
		return nil, errors.New("tweak: no document frequencies")
	}
	if qids == nil {
		for _, qid := range ds.Candidates.QueryIDs() {
			if ds.Qrels[qid] != nil {
				qids = append(qids, qid)
			}
		}
	}
	if len(qids) == 0 {
		return nil, fmt.Errorf("tweak: %s: no judged query has candidates", ds.Dir)
	}
	s := &Set{stats: st, qrels: dataset.Qrels{}, rowOf: map[[NumFeatures]float64]int32{}}
	docText := map[string]int{}
	var fp []string
	for _, qid := range qids {
		q, ok := ds.Query(qid)
		if !ok {
			return nil, fmt.Errorf("tweak: unknown query %q", qid)
		}
		judged := ds.Qrels[qid]
		s.qrels[qid] = judged
		qtext := Analyze(SplitQuery(q.FullText()))
		qst, key := st, ""
		if queryInLog && st.QF != nil {
			// Candidate features depend on the query left out, so a document
			// shared by two queries is featurized once per query.
			qst.QFLeaveOut = map[string]bool{}
			for _, o := range qtext.Terms {
				qst.QFLeaveOut[o.Term] = true
			}
			key = qid + "\x00"
		}
		qt := s.addText(qtext, qst)
		sq := setQuery{id: qid, begin: len(s.pairs)}
		fp = append(fp, "q:"+qid)
		for i, e := range ds.Candidates.Ranking(qid) {
			dt, ok := docText[key+e.DocID]
			if !ok {
				d, _ := ds.Doc(e.DocID) // dataset.Load checked candidates name known documents
				dt = s.addText(Analyze(d.Title, d.Text), qst)
				docText[key+e.DocID] = dt
			}
			g, isJudged := judged[e.DocID]
			p := pair{q: qt, d: dt, doc: e.DocID, rank: i + 1, grade: g, judged: isJudged}
			merge(s.texts[qt], s.texts[dt], func(i, j int) { p.shared = append(p.shared, int32(i), int32(j)) })
			s.pairs = append(s.pairs, p)
			if isJudged {
				fp = append(fp, "d:"+e.DocID)
			}
		}
		sq.end = len(s.pairs)
		for a := sq.begin; a < sq.end; a++ {
			for b := sq.begin; b < sq.end; b++ {
				pa, pb := s.pairs[a], s.pairs[b]
				if pa.judged && pb.judged && pa.grade > pb.grade {
					s.prefs = append(s.prefs, [2]int{a, b})
				}
			}
		}
		s.queries = append(s.queries, sq)
	}
	sort.Strings(fp)
	s.fp = models.Fingerprint(fp...)
	s.rowOf = nil
	return s, nil
}

func (s *Set) addText(t Text, st Stats) int {
	phi := st.Features(nil, t)
	row := make([]int32, len(t.Terms))
	for j := range row {
		key := [NumFeatures]float64(phi[j*NumFeatures : (j+1)*NumFeatures])
		r, ok := s.rowOf[key]
		if !ok {
			r = int32(len(s.rows) / NumFeatures)
			s.rows = append(s.rows, key[:]...)
			s.rowOf[key] = r
		}
		row[j] = r
	}
	s.texts = append(s.texts, setText{raw: t, row: row})
	return len(s.texts) - 1
}

// Queries returns the set's query ids in order.
func (s *Set) Queries() []string {
	out := make([]string, len(s.queries))
	for i, q := range s.queries {
		out[i] = q.id
	}
	return out
}

// Qrels returns the judgments of the set's queries.
func (s *Set) Qrels() dataset.Qrels { return s.qrels }

// Fingerprint identifies the set's queries and judged documents.
func (s *Set) Fingerprint() string { return s.fp }

// Pairs returns the number of (query, candidate) pairs and of preference
// pairs.
func (s *Set) Pairs() (pairs, prefs int) { return len(s.pairs), len(s.prefs) }

// Run turns one score per pair (in the set's pair order) into a run. Ties
// keep candidate-list order, i.e. are broken by first-stage rank.
func (s *Set) Run(scores []float64) dataset.Run {
	run := dataset.NewRun()
	for _, q := range s.queries {
		for i := q.begin; i < q.end; i++ {
			p := s.pairs[i]
			run.Add(q.id, dataset.Entry{DocID: p.doc, Score: scores[i], Rank: p.rank})
		}
	}
	return run
}

// Evaluate scores the run that scores make.
func (s *Set) Evaluate(scores []float64, metrics []eval.Metric) (eval.Result, error) {
	return eval.Evaluate(s.qrels, s.Run(scores), metrics)
}

// RankScores returns the first-stage order as scores (1/rank).
func (s *Set) RankScores() []float64 {
	out := make([]float64, len(s.pairs))
	for i, p := range s.pairs {
		out[i] = 1 / float64(p.rank)
	}
	return out
}

// TFIDFScores returns the TF-IDF cosine (Eq. 1 and 2) of every pair, with
// the set's document frequencies.
func (s *Set) TFIDFScores() []float64 {
	vecs := make([]Vector, len(s.texts))
	for i, t := range s.texts {
		vecs[i] = TFIDF(t.raw, s.stats.DF)
	}
	out := make([]float64, len(s.pairs))
	for i, p := range s.pairs {
		out[i] = Cosine(vecs[p.q], vecs[p.d])
	}
	return out
}

// Scores returns the TWEAK cosine of every pair under weights w.
func (s *Set) Scores(w []float64) []float64 {
	fw := s.forward(w)
	out := make([]float64, len(s.pairs))
	for i, p := range s.pairs {
		out[i] = fw.cosine(s, p)
	}
	return out
}
