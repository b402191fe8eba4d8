package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/blevesearch/bleve/v2"
	"github.com/spf13/cobra"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/offline"
)

// trainIndex is the index a trainer learns from (--index): any Bleve
// index, whose documents, read through a pipeline's fields (--pipeline),
// are the corpus of a training directory that has no corpus.jsonl, and
// whose first stage gives the candidate lists such a directory lacks
// (--depth deep). A directory with its own corpus.jsonl is read as it is,
// and a nil *trainIndex reads every directory so.
type trainIndex struct {
	idx    bleve.Index
	first  *rerank.Pipeline
	depth  int
	corpus []dataset.Doc // read on first use
}

// trainIndexFlags registers --index, --pipeline and --depth on cmd.
func trainIndexFlags(cmd *cobra.Command, indexPath, pipelinePath *string, depth *int) {
	f := cmd.Flags()
	f.StringVar(indexPath, "index", "", "learn from this index's documents (any Bleve index, read through --pipeline's fields) instead of the directories' corpus.jsonl; candidate lists a directory lacks are the index's first-stage top --depth")
	f.StringVar(pipelinePath, "pipeline", "", "with --index: pipeline file whose fields: and first_stage: say how the documents are read and searched (its stages are not built)")
	f.IntVar(depth, "depth", 100, "with --index: first-stage candidates per query, for directories without candidates.trec")
}

// openTrainIndex opens the index at path (nil when path is "") and reads
// its documents through the fields of the pipeline file at pipelinePath.
func openTrainIndex(ctx context.Context, path, pipelinePath string, depth int) (*trainIndex, error) {
	if path == "" {
		if pipelinePath != "" {
			return nil, errors.New("--pipeline names the fields of --index's documents: give --index too")
		}
		return nil, nil
	}
	if depth <= 0 {
		return nil, fmt.Errorf("--depth %d: want a positive number", depth)
	}
	idx, err := index.OpenAny(path)
	if err != nil {
		return nil, err
	}
	cfg := &rerank.Config{}
	if pipelinePath = pipelineFile(pipelinePath); pipelinePath != "" {
		if cfg, err = rerank.ReadConfig(pipelinePath); err != nil {
			idx.Close()
			return nil, err
		}
	}
	t := &trainIndex{idx: idx, depth: depth}
	if t.first, err = rerank.FirstStageOf(idx, cfg, depth); err == nil {
		err = index.CheckFields(idx, t.first.Fields.All()...)
	}
	if err != nil {
		idx.Close()
		return nil, fmt.Errorf("--index %s: %w", path, err)
	}
	return t, nil
}

// semrank returns the index when it is a semrank index.
func (t *trainIndex) semrank() (*index.Index, bool) {
	if t == nil {
		return nil, false
	}
	si, ok := t.idx.(*index.Index)
	return si, ok
}

// close closes the index, if any.
func (t *trainIndex) close() {
	if t != nil {
		t.idx.Close()
	}
}

// documents returns the index's documents, read through the pipeline's
// fields.
func (t *trainIndex) documents(ctx context.Context) ([]dataset.Doc, error) {
	if t.corpus == nil {
		docs, err := rerank.IndexCorpus(ctx, t.idx, t.first)
		if err != nil {
			return nil, err
		}
		t.corpus = docs
	}
	return t.corpus, nil
}

// load reads the BEIR directory dir (flag names it in errors): as it is
// when it has a corpus.jsonl, or there is no index; else its queries,
// judgments and candidate lists over the index's documents, and, with
// candidates and no candidates.trec in dir, each query's first-stage top
// depth over the index.
func (t *trainIndex) load(ctx context.Context, flag, dir string, candidates bool) (*dataset.Dataset, error) {
	if t == nil || exists(filepath.Join(dir, dataset.CorpusFile)) {
		ds, err := dataset.Load(dir)
		if err != nil {
			return nil, dataDirError(flag, dir, err)
		}
		return ds, nil
	}
	docs, err := t.documents(ctx)
	if err != nil {
		return nil, err
	}
	ds, err := dataset.LoadWith(dir, docs)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, dir, err)
	}
	if candidates && ds.Candidates == nil {
		first, _, err := offline.RunDataset(ctx, t.idx, ds, t.first, t.depth, nil)
		if err != nil {
			return nil, err
		}
		ds.Candidates = &first
	}
	return ds, nil
}

// loadAll reads the directories dirs as load does, as one dataset
// (dataset.Merge).
func (t *trainIndex) loadAll(ctx context.Context, flag string, dirs []string) (*dataset.Dataset, error) {
	sets := make([]*dataset.Dataset, len(dirs))
	for i, d := range dirs {
		ds, err := t.load(ctx, flag, d, true)
		if err != nil {
			return nil, err
		}
		sets[i] = ds
	}
	return dataset.Merge(sets...)
}

// pipelineFields returns the fields: key of the pipeline file at path (a
// file, or a directory holding pipeline.yaml), nothing when path is "".
func pipelineFields(path string) (rerank.Fields, error) {
	if path = pipelineFile(path); path == "" {
		return rerank.Fields{}, nil
	}
	cfg, err := rerank.ReadConfig(path)
	if err != nil {
		return rerank.Fields{}, err
	}
	return cfg.Fields, nil
}
