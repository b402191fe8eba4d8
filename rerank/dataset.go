package rerank

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
)

// EnvFor returns the stage environment backed by idx.
func EnvFor(idx *index.Index) Env {
	return Env{Index: idx, Payloads: idx, Stats: idx}
}

// EnvOf returns the stage environment backed by idx, any Bleve index: a
// semrank index's (EnvFor), an EnvIndex's own, or one whose statistics
// and analysis a pipeline takes from idx and its mapping for the fields it
// names.
func EnvOf(idx bleve.Index) Env {
	switch x := idx.(type) {
	case *index.Index:
		return EnvFor(x)
	case EnvIndex:
		return x.StageEnv()
	}
	return Env{Index: idx}
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

// Open opens the Bleve index at indexPath read-only (index.OpenAny: any
// mapping; other readers may share it) and builds the pipeline file at
// pipelinePath against it. With an empty indexPath it indexes ds's corpus
// into a temporary index (see IndexFor), in the system's temporary
// directory; close removes it.
func Open(ctx context.Context, pipelinePath, indexPath string, ds *eval.Dataset, progress index.Progress, opts ...OpenOption) (idx bleve.Index, p *Pipeline, cfg *Config, closeFn func() error, err error) {
	if indexPath != "" {
		idx, err = index.OpenAny(indexPath)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		p, cfg, err = LoadPipeline(pipelinePath, EnvOf(idx), opts...)
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
	si, p, cfg, err := IndexFor(ctx, pipelinePath, filepath.Join(tmp, "index"), ds, progress, opts...)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, nil, nil, nil, err
	}
	closeFn = func() error {
		err := si.Close()
		if e := os.RemoveAll(tmp); err == nil {
			err = e
		}
		return err
	}
	return si, p, cfg, closeFn, nil
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

// RunDataset reranks every query of ds (its given candidates, or the
// first stage's top depth hits, at least the window) with p over idx, any
// Bleve index, and returns the first-stage run and the reranked run.
func RunDataset(ctx context.Context, idx bleve.Index, ds *eval.Dataset, p *Pipeline, depth int, progress index.Progress) (first, reranked eval.Run, err error) {
	first, reranked = eval.NewRun(), eval.NewRun()
	err = eachQuery(ctx, idx, ds, p, depth, func(i int, q eval.Query, cands []Candidate, scored []Scored) error {
		for _, c := range cands {
			first.Add(q.ID, eval.Entry{DocID: c.ID, Rank: c.Rank, Score: index.DistinctScore(c.Score, c.Rank)})
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

// FirstStageRun returns the first stage's run over idx, any Bleve index,
// for every query of ds: its given candidates scored, or its top depth
// documents (see RunDataset).
func FirstStageRun(ctx context.Context, idx bleve.Index, ds *eval.Dataset, depth int, progress index.Progress) (eval.Run, error) {
	p, err := FirstStagePipeline(idx, depth)
	if err != nil {
		return eval.Run{}, err
	}
	first, _, err := RunDataset(ctx, idx, ds, p, depth, progress)
	return first, err
}

// EachQuery reranks every query of ds with p over idx and calls fn with
// the query's index in ds.Queries, its first-stage candidates and the
// reranked candidates (whose StageScores keep every stage's raw score), so
// callers that need both the fused order and each stage's own order score
// every stage once.
func EachQuery(ctx context.Context, idx bleve.Index, ds *eval.Dataset, p *Pipeline,
	fn func(i int, q eval.Query, cands []Candidate, scored []Scored) error) error {
	return eachQuery(ctx, idx, ds, p, 0, fn)
}

// eachQuery is EachQuery retrieving depth hits (at least the window).
func eachQuery(ctx context.Context, idx bleve.Index, ds *eval.Dataset, p *Pipeline, depth int,
	fn func(i int, q eval.Query, cands []Candidate, scored []Scored) error) error {
	s := Searcher{Index: idx, Pipeline: p}
	for i, q := range ds.Queries {
		cands, err := s.DatasetCandidates(ctx, ds, q, depth)
		if err != nil {
			return fmt.Errorf("query %q: %w", q.ID, err)
		}
		scored, err := p.Rerank(ctx, Query{ID: q.ID, Text: q.FullText()}, cands)
		if err != nil {
			return fmt.Errorf("query %q: %w", q.ID, err)
		}
		if err := fn(i, q, cands, scored); err != nil {
			return err
		}
	}
	return nil
}

// DatasetCandidates returns the first-stage candidates of q, a query of
// ds: ds's given list for q when it has candidate lists
// (GivenCandidates), else the top depth, at least the window
// (Candidates).
func (s Searcher) DatasetCandidates(ctx context.Context, ds *eval.Dataset, q eval.Query, depth int) ([]Candidate, error) {
	rq := Query{ID: q.ID, Text: q.FullText()}
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
func Examples(ctx context.Context, idx bleve.Index, ds *eval.Dataset, p *Pipeline) ([]Example, error) {
	if ds.Qrels == nil {
		return nil, fmt.Errorf("rerank: %s has no judgments to learn fusion weights from", ds.Dir)
	}
	var out []Example
	for _, q := range ds.Queries {
		judged, ok := ds.Qrels[q.ID]
		if !ok {
			continue
		}
		cands, err := Searcher{Index: idx, Pipeline: p}.DatasetCandidates(ctx, ds, q, 0)
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", q.ID, err)
		}
		// Only the window, as Rerank fuses it: a given list may be longer.
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
