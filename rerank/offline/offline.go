// Package offline runs pipelines over datasets: a run for every query
// (RunDataset, FirstStageRun, EachQuery), fusion training examples from
// judged queries (Examples), and an index built for a dataset's corpus
// (Open, IndexFor). Package rerank holds the query path these call.
package offline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/learn"
)

// Opened is an index and the pipeline built against it, as Open and
// IndexFor return them.
type Opened struct {
	Index    bleve.Index
	Pipeline *rerank.Pipeline
	Config   *rerank.Config // the pipeline file as read, after the LoadOptions
	close    func() error
}

// Close closes the index, and removes it when Open built it in a
// temporary directory.
func (o *Opened) Close() error { return o.close() }

// Open opens the Bleve index at indexPath read-only (index.OpenAny: any
// mapping; other readers may share it) and builds the pipeline file at
// pipelinePath against it. With an empty indexPath it indexes ds's corpus
// into a temporary index (see IndexFor), in the system's temporary
// directory, which Close removes.
func Open(ctx context.Context, pipelinePath, indexPath string, ds *dataset.Dataset, progress index.Progress, opts ...rerank.LoadOption) (*Opened, error) {
	if indexPath != "" {
		idx, err := index.OpenAny(indexPath)
		if err != nil {
			return nil, err
		}
		p, cfg, err := rerank.LoadPipeline(pipelinePath, rerank.EnvOf(idx), opts...)
		if err != nil {
			idx.Close()
			return nil, err
		}
		return &Opened{Index: idx, Pipeline: p, Config: cfg, close: idx.Close}, nil
	}
	tmp, err := os.MkdirTemp("", "semrank-index-")
	if err != nil {
		return nil, err
	}
	o, err := IndexFor(ctx, pipelinePath, filepath.Join(tmp, "index"), ds, progress, opts...)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	closeIndex := o.close
	o.close = func() error {
		err := closeIndex()
		if e := os.RemoveAll(tmp); err == nil {
			err = e
		}
		return err
	}
	return o, nil
}

// IndexFor indexes ds's corpus into a new semrank index at dir, with the
// payloads the stages of the pipeline file at pipelinePath read, and
// returns the index and the pipeline built against it; Close closes the
// index and leaves dir. On error it closes the index and leaves dir for
// the caller to remove.
func IndexFor(ctx context.Context, pipelinePath, dir string, ds *dataset.Dataset, progress index.Progress, opts ...rerank.LoadOption) (*Opened, error) {
	if ds == nil {
		return nil, errors.New("rerank: no index and no corpus to index")
	}
	idx, err := index.Create(dir)
	if err != nil {
		return nil, err
	}
	p, cfg, err := rerank.LoadPipeline(pipelinePath, rerank.EnvFor(idx), opts...)
	if err == nil {
		encs := append([]index.PayloadEncoder{index.TermsEncoder{}}, p.Encoders()...)
		err = idx.Add(ctx, ds.Corpus, encs, progress)
	}
	if err == nil {
		err = idx.Compact(ctx)
	}
	if err != nil {
		idx.Close()
		return nil, err
	}
	return &Opened{Index: idx, Pipeline: p, Config: cfg, close: idx.Close}, nil
}

// RunDataset reranks every query of ds (its given candidates, or the
// first stage's top depth hits, at least the window) with p over idx, any
// Bleve index, and returns the first-stage run and the reranked run.
func RunDataset(ctx context.Context, idx bleve.Index, ds *dataset.Dataset, p *rerank.Pipeline, depth int, progress index.Progress) (first, reranked dataset.Run, err error) {
	first, reranked = dataset.NewRun(), dataset.NewRun()
	err = eachQuery(ctx, idx, ds, p, depth, func(i int, q dataset.Query, cands []rerank.Candidate, scored []rerank.Scored) error {
		for _, c := range cands {
			first.Add(q.ID, dataset.Entry{DocID: c.ID, Rank: c.Rank, Score: index.DistinctScore(c.Score, c.Rank)})
		}
		for j, s := range scored {
			reranked.Add(q.ID, dataset.Entry{DocID: s.ID, Rank: j + 1, Score: s.Score})
		}
		if progress != nil {
			progress(i+1, len(ds.Queries))
		}
		return nil
	})
	return first, reranked, err
}

// FirstStageRun returns the first stage's run over idx, any Bleve index,
// for every query of ds: its given candidates scored, or its top depth
// documents (see RunDataset).
func FirstStageRun(ctx context.Context, idx bleve.Index, ds *dataset.Dataset, depth int, progress index.Progress) (dataset.Run, error) {
	p, err := rerank.FirstStagePipeline(idx, depth)
	if err != nil {
		return dataset.Run{}, err
	}
	first, _, err := RunDataset(ctx, idx, ds, p, depth, progress)
	return first, err
}

// EachQuery reranks every query of ds with p over idx and calls fn with
// the query's index in ds.Queries, its first-stage candidates and the
// reranked candidates (whose StageScores keep every stage's raw score), so
// callers that need both the fused order and each stage's own order score
// every stage once.
func EachQuery(ctx context.Context, idx bleve.Index, ds *dataset.Dataset, p *rerank.Pipeline,
	fn func(i int, q dataset.Query, cands []rerank.Candidate, scored []rerank.Scored) error) error {
	return eachQuery(ctx, idx, ds, p, 0, fn)
}

// eachQuery is EachQuery retrieving depth hits (at least the window).
func eachQuery(ctx context.Context, idx bleve.Index, ds *dataset.Dataset, p *rerank.Pipeline, depth int,
	fn func(i int, q dataset.Query, cands []rerank.Candidate, scored []rerank.Scored) error) error {
	s := rerank.Searcher{Index: idx, Pipeline: p}
	for i, q := range ds.Queries {
		cands, err := Candidates(ctx, s, ds, q, depth)
		if err != nil {
			return fmt.Errorf("query %q: %w", q.ID, err)
		}
		scored, err := p.Rerank(ctx, rerank.Query{ID: q.ID, Text: q.FullText()}, cands)
		if err != nil {
			return fmt.Errorf("query %q: %w", q.ID, err)
		}
		if err := fn(i, q, cands, scored); err != nil {
			return err
		}
	}
	return nil
}

// Candidates returns the first-stage candidates s finds for q, a query of
// ds: ds's given list for q when it has candidate lists
// (Searcher.GivenCandidates), else the top depth, at least the window
// (Searcher.Candidates).
func Candidates(ctx context.Context, s rerank.Searcher, ds *dataset.Dataset, q dataset.Query, depth int) ([]rerank.Candidate, error) {
	rq := rerank.Query{ID: q.ID, Text: q.FullText()}
	if ds.Candidates != nil {
		var ids []string
		for _, e := range ds.Candidates.Ranking(q.ID) {
			ids = append(ids, e.DocID)
		}
		return s.GivenCandidates(ctx, rq, nil, ids)
	}
	return s.Candidates(ctx, rq, nil, depth)
}

// Examples runs the pipeline's stages over every judged query of ds and
// returns fusion training examples: each query's fusion input over the
// candidates Rerank would fuse (the window) and their grades (unjudged
// candidates count as not relevant). With given candidate lists
// (ds.Candidates) the inputs include each candidate's given rank, which
// a fusion trained on them may weigh; searches (Wrap, the server)
// retrieve their candidates and never have it (see
// Pipeline.GivenListWeights).
func Examples(ctx context.Context, idx bleve.Index, ds *dataset.Dataset, p *rerank.Pipeline) ([]learn.Example, error) {
	if ds.Qrels == nil {
		return nil, fmt.Errorf("rerank: %s has no judgments to learn fusion weights from", ds.Dir)
	}
	var out []learn.Example
	for _, q := range ds.Queries {
		judged, ok := ds.Qrels[q.ID]
		if !ok {
			continue
		}
		cands, err := Candidates(ctx, rerank.Searcher{Index: idx, Pipeline: p}, ds, q, 0)
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", q.ID, err)
		}
		// Only the window, as Rerank fuses it: a given list may be longer.
		cands = cands[:min(len(cands), p.WindowSize())]
		if len(cands) == 0 {
			continue
		}
		scores, err := p.ScoreStages(ctx, rerank.Query{ID: q.ID, Text: q.FullText()}, cands)
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", q.ID, err)
		}
		labels := make([]int, len(cands))
		for i, c := range cands {
			labels[i] = judged[c.ID]
		}
		out = append(out, learn.Example{Input: rerank.FusionInput{Names: p.StageNames(), Candidates: cands, Scores: scores}, Labels: labels})
	}
	return out, nil
}
