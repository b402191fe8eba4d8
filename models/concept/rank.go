package concept

import (
	"fmt"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
)

// DevMetric is the metric early stopping watches: the official SemEval MAP.
const DevMetric = "map@10"

// Run turns per-list scores into an evaluation run and the lists'
// judgments into qrels.
func Run(lists []Judged, scores [][]float64) (dataset.Run, dataset.Qrels, error) {
	if len(scores) != len(lists) {
		return dataset.Run{}, nil, fmt.Errorf("concept: %d score lists for %d queries", len(scores), len(lists))
	}
	run := dataset.NewRun()
	qrels := dataset.Qrels{}
	for i, l := range lists {
		if len(scores[i]) != len(l.DocIDs) {
			return dataset.Run{}, nil, fmt.Errorf("concept: query %s: %d scores for %d candidates", l.QueryID, len(scores[i]), len(l.DocIDs))
		}
		for j, id := range l.DocIDs {
			run.Add(l.QueryID, dataset.Entry{DocID: id, Score: scores[i][j], Rank: j + 1})
			qrels.Add(l.QueryID, id, l.Grades[j])
		}
	}
	return run, qrels, nil
}

// Evaluate scores lists with the given metrics.
func Evaluate(lists []Judged, scores [][]float64, metrics []eval.Metric) (eval.Result, error) {
	run, qrels, err := Run(lists, scores)
	if err != nil {
		return eval.Result{}, err
	}
	return eval.Evaluate(qrels, run, metrics)
}

// MAP returns the mean SemEval MAP (map@10) of the scores.
func MAP(lists []Judged, scores [][]float64) float64 {
	res, err := Evaluate(lists, scores, eval.MustParseMetrics(DevMetric))
	if err != nil {
		return 0
	}
	return res.Mean[0]
}

// Embedder maps a text to a dense concept vector.
type Embedder interface {
	Embed(text string) []float64
}

// CosineScores scores every list by the cosine of the query's and each
// candidate's concept vectors.
func CosineScores(e Embedder, lists []Judged) [][]float64 {
	out := make([][]float64, len(lists))
	for i, l := range lists {
		q := e.Embed(l.Query)
		out[i] = make([]float64, len(l.Docs))
		for j, d := range l.Docs {
			out[i][j] = Cosine(q, e.Embed(d))
		}
	}
	return out
}
