package rerank

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
)

// EnvFor returns the stage environment backed by idx.
func EnvFor(idx *index.Index) Env {
	return Env{Index: idx, Payloads: idx, Stats: idx}
}

// OpenOption changes how Open builds the pipeline.
type OpenOption func(*Config)

// StagesOnly makes Open ignore the pipeline file's fusion, for learning a
// fusion of its stages. The fusion model is not loaded, so its checksum
// is not checked either: it may be the file being retrained.
func StagesOnly() OpenOption {
	return func(c *Config) {
		if c.Fusion.Model != "" {
			delete(c.Checksums, checksumKey(c.Fusion.Model))
		}
		c.Fusion = FusionSpec{Method: "none"}
	}
}

// Open opens the index at indexPath read-only (index.OpenReadOnly: other
// readers may share it) and builds the pipeline file at pipelinePath
// against it. With an empty indexPath it indexes ds's corpus
// into a temporary index (see IndexFor), in the system's temporary
// directory; close removes it.
func Open(ctx context.Context, pipelinePath, indexPath string, ds *eval.Dataset, progress index.Progress, opts ...OpenOption) (idx *index.Index, p *Pipeline, cfg *Config, closeFn func() error, err error) {
	if indexPath != "" {
		idx, err = index.OpenReadOnly(indexPath)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		p, cfg, err = LoadPipeline(pipelinePath, EnvFor(idx), opts...)
		if err != nil {
			idx.Close()
			return nil, nil, nil, nil, err
		}
		return idx, p, cfg, idx.Close, nil
	}
	tmp, err := os.MkdirTemp("", "semrank-index-")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	idx, p, cfg, err = IndexFor(ctx, pipelinePath, filepath.Join(tmp, "index"), ds, progress, opts...)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, nil, nil, nil, err
	}
	closeFn = func() error {
		err := idx.Close()
		if e := os.RemoveAll(tmp); err == nil {
			err = e
		}
		return err
	}
	return idx, p, cfg, closeFn, nil
}

// IndexFor indexes ds's corpus into a new index at dir, with the payloads
// the stages of the pipeline file at pipelinePath read, and returns the
// index and the pipeline built against it. On error it closes the index
// and leaves dir for the caller to remove.
func IndexFor(ctx context.Context, pipelinePath, dir string, ds *eval.Dataset, progress index.Progress, opts ...OpenOption) (*index.Index, *Pipeline, *Config, error) {
	if ds == nil {
		return nil, nil, nil, errors.New("rerank: no index and no corpus to index")
	}
	idx, err := index.Create(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	p, cfg, err := LoadPipeline(pipelinePath, EnvFor(idx), opts...)
	if err == nil {
		encs := append([]index.PayloadEncoder{index.TermsEncoder{}}, p.Encoders()...)
		err = idx.Add(ctx, ds.Corpus, encs, progress)
	}
	if err == nil {
		err = idx.Compact(ctx)
	}
	if err != nil {
		idx.Close()
		return nil, nil, nil, err
	}
	return idx, p, cfg, nil
}

// FirstStageQuery returns the Bleve query for text: the plain BM25 text
// query, or, when qw is set, its learned query term weights as boosts.
func FirstStageQuery(text string, qw QueryWeighter) (query.Query, error) {
	if qw != nil {
		if w := qw.QueryWeights(text); len(w) > 0 {
			return index.WeightedQuery(w)
		}
	}
	return index.TextQuery(text)
}

// RunDataset reranks every query of ds (its given candidates, or the
// first stage's top window) with p and returns the first-stage run and the
// reranked run.
func RunDataset(ctx context.Context, idx *index.Index, ds *eval.Dataset, p *Pipeline, qw QueryWeighter, progress index.Progress) (first, reranked eval.Run, err error) {
	first, reranked = eval.NewRun(), eval.NewRun()
	err = EachQuery(ctx, idx, ds, p, qw, func(i int, q eval.Query, hits []index.Hit, scored []Scored) error {
		for _, h := range hits {
			first.Add(q.ID, eval.Entry{DocID: h.ID, Rank: h.Rank, Score: index.DistinctScore(h.Score, h.Rank)})
		}
		for j, s := range scored {
			reranked.Add(q.ID, eval.Entry{DocID: s.ID, Rank: j + 1, Score: s.Score})
		}
		if progress != nil {
			progress(i+1, len(ds.Queries))
		}
		return nil
	})
	return first, reranked, err
}

// EachQuery reranks every query of ds with p and calls fn with the query's
// index in ds.Queries, its first-stage hits and the reranked candidates
// (whose StageScores keep every stage's raw score), so callers that need
// both the fused order and each stage's own order score every stage once.
func EachQuery(ctx context.Context, idx *index.Index, ds *eval.Dataset, p *Pipeline, qw QueryWeighter,
	fn func(i int, q eval.Query, hits []index.Hit, scored []Scored) error) error {
	for i, q := range ds.Queries {
		hits, err := candidates(ctx, idx, ds, q, p.WindowSize(), qw)
		if err != nil {
			return fmt.Errorf("query %q: %w", q.ID, err)
		}
		scored, err := p.Rerank(ctx, Query{ID: q.ID, Text: q.FullText()}, FromHits(hits))
		if err != nil {
			return fmt.Errorf("query %q: %w", q.ID, err)
		}
		if err := fn(i, q, hits, scored); err != nil {
			return err
		}
	}
	return nil
}

func candidates(ctx context.Context, idx *index.Index, ds *eval.Dataset, q eval.Query, window int, qw QueryWeighter) ([]index.Hit, error) {
	bq, err := FirstStageQuery(q.FullText(), qw)
	if errors.Is(err, index.ErrEmptyQuery) {
		bq = nil
	} else if err != nil {
		return nil, err
	}
	if ds.Candidates != nil {
		var ids []string
		for _, e := range ds.Candidates.Ranking(q.ID) {
			ids = append(ids, e.DocID)
		}
		return idx.Given(ctx, bq, ids)
	}
	if bq == nil {
		return nil, nil
	}
	return idx.TopN(ctx, bq, window)
}

// Examples runs the pipeline's stages over every judged query of ds and
// returns fusion training examples: each query's fusion input over the
// candidates Rerank would fuse (the window) and their grades (unjudged
// candidates count as not relevant). With given candidate lists
// (ds.Candidates) the inputs include each candidate's given rank, which
// a fusion trained on them may weigh; searches (Wrap, the server)
// retrieve their candidates and never have it (see
// Pipeline.GivenListWeights).
func Examples(ctx context.Context, idx *index.Index, ds *eval.Dataset, p *Pipeline, qw QueryWeighter) ([]Example, error) {
	if ds.Qrels == nil {
		return nil, fmt.Errorf("rerank: %s has no judgments to learn fusion weights from", ds.Dir)
	}
	var out []Example
	for _, q := range ds.Queries {
		judged, ok := ds.Qrels[q.ID]
		if !ok {
			continue
		}
		hits, err := candidates(ctx, idx, ds, q, p.WindowSize(), qw)
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", q.ID, err)
		}
		// Only the window, as Rerank fuses it: a given list may be longer.
		cands := FromHits(hits)
		cands = cands[:min(len(cands), p.WindowSize())]
		if len(cands) == 0 {
			continue
		}
		scores, err := p.ScoreStages(ctx, Query{ID: q.ID, Text: q.FullText()}, cands)
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", q.ID, err)
		}
		labels := make([]int, len(cands))
		for i, c := range cands {
			labels[i] = judged[c.ID]
		}
		out = append(out, Example{Input: FusionInput{Names: p.StageNames(), Candidates: cands, Scores: scores}, Labels: labels})
	}
	return out, nil
}
