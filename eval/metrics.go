// Package eval measures rankings (dataset.Run) against relevance
// judgments (dataset.Qrels): metrics, reports and paired significance
// tests.
//
// Metrics follow two conventions, named so that a number can be checked
// against the tool that defines it:
//
//   - map@k is the SemEval-2016 Task 3 scorer's MAP: for each query the
//     candidates are sorted by score, the top k kept, and AP is the mean of
//     precision@i over the relevant positions i in that top k. A query with
//     no relevant candidate has AP 0 and still counts.
//   - map is trec_eval's MAP: AP over the whole ranking divided by the
//     number of documents judged relevant.
//
// Every metric is averaged over all queries in the judgments (a query the
// run lacks scores 0, like trec_eval -c). Relevance is grade > 0; nDCG uses
// the grade as gain with a log2 rank discount, as trec_eval does.
//
// Equal scores keep the run's order (see dataset.Run.Sorted), as the SemEval
// scorer's stable sort does; trec_eval instead orders them by descending
// document id, so on a run with tied scores its numbers can differ from
// these. Runs semrank writes have no ties.
package eval

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/semrank/semrank/dataset"
)

// Metric is a parsed metric name such as "map@10" or "auc".
type Metric struct {
	Name string // map, mrr, ndcg, p, r, auc
	K    int    // cutoff; 0 means the whole ranking
}

func (m Metric) String() string {
	if m.K > 0 {
		return fmt.Sprintf("%s@%d", m.Name, m.K)
	}
	return m.Name
}

// ParseMetrics parses a comma-separated list such as "map@10,mrr@10,auc",
// case-insensitively. It also accepts trec_eval's names for the metrics it
// shares, so that a number can be asked for as the tool reporting it
// names it: ndcg_cut_k (ndcg@k), recall_k (r@k), P_k (p@k), recip_rank
// (mrr over the whole ranking) and map. trec_eval's map_cut_k is not
// map@k (it divides by every relevant document, not the ones found in the
// top k) and is not accepted.
func ParseMetrics(s string) ([]Metric, error) {
	var out []Metric
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(strings.ToLower(part))
		if part == "" {
			continue
		}
		if m, ok, err := trecEvalMetric(part); ok || err != nil {
			if err != nil {
				return nil, err
			}
			out = append(out, m)
			continue
		}
		name, kstr, hasK := strings.Cut(part, "@")
		m := Metric{Name: name}
		if hasK {
			k, err := strconv.Atoi(kstr)
			if err != nil || k <= 0 {
				return nil, fmt.Errorf("metric %q: cutoff must be a positive integer", part)
			}
			m.K = k
		}
		switch name {
		case "map", "mrr", "ndcg", "auc":
		case "p", "r":
			if m.K == 0 {
				return nil, fmt.Errorf("metric %q needs a cutoff, e.g. %s@10", part, name)
			}
		default:
			return nil, fmt.Errorf("unknown metric %q (known: map, map@k, mrr@k, ndcg@k, p@k, r@k, auc; and trec_eval's ndcg_cut_k, recall_k, P_k, recip_rank)", part)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no metrics in %q", s)
	}
	return out, nil
}

// trecEvalMetric reads name, lower-cased, as a trec_eval metric name: ok
// says it is one, and err that its cutoff is not a positive integer.
func trecEvalMetric(name string) (m Metric, ok bool, err error) {
	if name == "recip_rank" {
		return Metric{Name: "mrr"}, true, nil
	}
	for prefix, ours := range map[string]string{"ndcg_cut_": "ndcg", "recall_": "r", "p_": "p"} {
		kstr, found := strings.CutPrefix(name, prefix)
		if !found {
			continue
		}
		k, err := strconv.Atoi(kstr)
		if err != nil || k <= 0 {
			return Metric{}, false, fmt.Errorf("metric %q: cutoff must be a positive integer", name)
		}
		return Metric{Name: ours, K: k}, true, nil
	}
	return Metric{}, false, nil
}

// SemEvalMetrics are the metrics of the SemEval-2016 Task 3 scorer (and
// more on the same cut), for runs that rank a short given candidate list
// per query: map@10 is the task's MAP.
var SemEvalMetrics = MustParseMetrics("map@10,mrr@10,ndcg@10,p@1,auc")

// RetrievalMetrics are the metrics BEIR reports (nDCG@10, trec_eval's MAP,
// recall@100), for runs that rank many documents of a collection per query.
var RetrievalMetrics = MustParseMetrics("ndcg@10,map,r@100")

// DefaultMetrics returns SemEvalMetrics when every run ranks at most 10
// documents for every query, as SemEval's candidate lists are, and
// RetrievalMetrics otherwise. On a retrieval run map@10 would mislead: it
// averages precision over the relevant documents found in the top 10 only,
// so it can be several times trec MAP.
func DefaultMetrics(runs ...dataset.Run) []Metric {
	for _, r := range runs {
		for _, qid := range r.QueryIDs() {
			if len(r.Ranking(qid)) > 10 {
				return RetrievalMetrics
			}
		}
	}
	return SemEvalMetrics
}

// MustParseMetrics is ParseMetrics for constant lists.
func MustParseMetrics(s string) []Metric {
	m, err := ParseMetrics(s)
	if err != nil {
		panic(err)
	}
	return m
}

// Result holds per-query and mean values of a set of metrics.
type Result struct {
	Metrics  []Metric
	Queries  []string             // the judged queries, sorted
	PerQuery map[string][]float64 // query → one value per metric
	Mean     []float64
}

// Value returns the mean of the named metric (e.g. "map@10"), or NaN.
func (r Result) Value(name string) float64 {
	for i, m := range r.Metrics {
		if m.String() == name {
			return r.Mean[i]
		}
	}
	return math.NaN()
}

// Column returns per-query values of metric i in Queries order.
func (r Result) Column(i int) []float64 {
	out := make([]float64, len(r.Queries))
	for j, q := range r.Queries {
		out[j] = r.PerQuery[q][i]
	}
	return out
}

// Evaluate scores run against qrels. Queries in the run that the qrels do
// not know are an error (see Run.CheckQueries); filter them first to
// ignore them deliberately. So are a document listed twice for one query
// and a NaN score, which ReadRun refuses and a run built in memory may hold.
func Evaluate(q dataset.Qrels, run dataset.Run, metrics []Metric) (Result, error) {
	if err := run.CheckQueries(q); err != nil {
		return Result{}, err
	}
	if err := run.CheckEntries(); err != nil {
		return Result{}, err
	}
	res := Result{Metrics: metrics, Queries: dataset.SortedKeys(q), PerQuery: map[string][]float64{}}
	res.Mean = make([]float64, len(metrics))
	for _, qid := range res.Queries {
		ranked := run.Sorted(qid)
		vals := make([]float64, len(metrics))
		for i, m := range metrics {
			if len(ranked) == 0 {
				break // a query the run lacks scores 0 on every metric, AUC included
			}
			vals[i] = score(m, q[qid], ranked)
			res.Mean[i] += vals[i]
		}
		res.PerQuery[qid] = vals
	}
	for i := range res.Mean {
		if len(res.Queries) > 0 {
			res.Mean[i] /= float64(len(res.Queries))
		}
	}
	return res, nil
}

func score(m Metric, judged map[string]int, ranked []dataset.Entry) float64 {
	top := ranked
	if m.K > 0 && len(top) > m.K {
		top = top[:m.K]
	}
	switch m.Name {
	case "map":
		if m.K > 0 {
			return semevalAP(judged, top)
		}
		return trecAP(judged, ranked)
	case "mrr":
		for i, e := range top {
			if judged[e.DocID] > 0 {
				return 1 / float64(i+1)
			}
		}
		return 0
	case "p":
		return float64(countRel(judged, top)) / float64(m.K)
	case "r":
		n := 0
		for _, g := range judged {
			if g > 0 {
				n++
			}
		}
		if n == 0 {
			return 0
		}
		return float64(countRel(judged, top)) / float64(n)
	case "ndcg":
		return ndcg(judged, top, m.K)
	case "auc":
		return AUC(judged, top)
	}
	return math.NaN()
}

func countRel(judged map[string]int, es []dataset.Entry) int {
	n := 0
	for _, e := range es {
		if judged[e.DocID] > 0 {
			n++
		}
	}
	return n
}

// semevalAP is the SemEval scorer's AP: precision averaged over the
// relevant positions found in the (already cut) list.
func semevalAP(judged map[string]int, top []dataset.Entry) float64 {
	hits, sum := 0, 0.0
	for i, e := range top {
		if judged[e.DocID] > 0 {
			hits++
			sum += float64(hits) / float64(i+1)
		}
	}
	if hits == 0 {
		return 0
	}
	return sum / float64(hits)
}

func trecAP(judged map[string]int, ranked []dataset.Entry) float64 {
	nrel := 0
	for _, g := range judged {
		if g > 0 {
			nrel++
		}
	}
	if nrel == 0 {
		return 0
	}
	hits, sum := 0, 0.0
	for i, e := range ranked {
		if judged[e.DocID] > 0 {
			hits++
			sum += float64(hits) / float64(i+1)
		}
	}
	return sum / float64(nrel)
}

func ndcg(judged map[string]int, top []dataset.Entry, k int) float64 {
	dcg := 0.0
	for i, e := range top {
		if g := judged[e.DocID]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
	}
	var gains []int
	for _, g := range judged {
		if g > 0 {
			gains = append(gains, g)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(gains)))
	if k > 0 && len(gains) > k {
		gains = gains[:k]
	}
	ideal := 0.0
	for i, g := range gains {
		ideal += float64(g) / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

// AUC is the area under the ROC curve of one ranked list: the fraction of
// (relevant, non-relevant) judged pairs the ranking orders correctly, a pair
// whose scores tie counting one half (the Mann-Whitney statistic). ranked
// must be in rank order, so that tied scores are adjacent, as Run.Sorted
// gives them. Unjudged documents are ignored; a list without both kinds
// scores 0.5.
func AUC(judged map[string]int, ranked []dataset.Entry) float64 {
	pos, neg := 0, 0
	correct := 0.0
	for i := 0; i < len(ranked); {
		// One group of equal scores: ranked[i:j].
		gpos, gneg := 0, 0
		j := i
		for ; j < len(ranked) && (j == i || ranked[j].Score == ranked[i].Score); j++ {
			g, ok := judged[ranked[j].DocID]
			switch {
			case !ok:
			case g > 0:
				gpos++
			default:
				gneg++
			}
		}
		correct += float64(gneg*pos) + 0.5*float64(gneg*gpos)
		pos += gpos
		neg += gneg
		i = j
	}
	if pos == 0 || neg == 0 {
		return 0.5
	}
	return correct / (float64(pos) * float64(neg))
}
