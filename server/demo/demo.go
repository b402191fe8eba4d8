// Package demo builds semrank's out-of-the-box demo from a small judged
// BEIR directory (the bundled testdata/demo, SemEval-2016 Task 3 subtask B,
// which package testdata builds into the binary): it indexes the corpus,
// each document once (the data repeats some under several ids), trains
// small models on the judgments of four fifths of the queries, writes a
// pipeline file over them, and compares the first stage with the reranked
// lists on the queries held out.
//
// The pipeline has the cheap lexical stages this build registers (tfidf,
// bm25, overlap, length) and, when the tweak stage type is registered, a
// TWEAK model (models/tweak) trained with the paper's preference loss on
// the training queries' given candidate lists. A linear fusion is learned
// on the training queries' retrieved lists (BM25 top window over the whole
// corpus, unjudged documents counted as not relevant), the setting the
// server searches in. Choices the demo makes on its own: the held-out fold
// is the first of dataset.Dataset.Folds(5), so it is the same on every run;
// the fusion learns from TWEAK scores on TWEAK's own training queries
// (no cross-fitting: the demo must start in seconds, and its held-out
// numbers are reported separately), and the window is 50.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/learn"
	"github.com/semrank/semrank/rerank/offline"
)

// Window is the demo pipeline's rerank window.
const Window = 50

// Options configure Build.
type Options struct {
	Data string    // judged BEIR directory with candidates.trec
	FS   fs.FS     // where Data is read from (such as testdata.Demo); nil for the file system
	Dir  string    // where the index, models and pipeline file are written
	Log  io.Writer // progress lines; nil for none
}

// Demo is a built demo.
type Demo struct {
	Index        *index.Index
	PipelinePath string
	Dataset      *dataset.Dataset
	Train, Test  []string // query ids the models learned from, and held out
	Stages       []string
}

// Close closes the index.
func (d *Demo) Close() error { return d.Index.Close() }

// Examples returns the texts of up to n held-out queries.
func (d *Demo) Examples(n int) []string {
	var out []string
	for _, id := range d.Test[:min(n, len(d.Test))] {
		q, _ := d.Dataset.Query(id)
		out = append(out, q.FullText())
	}
	return out
}

// Build indexes the corpus of o.Data into o.Dir, trains the models and
// writes o.Dir/pipeline.yaml. It refuses a directory that already holds
// any of these, before writing anything.
func Build(ctx context.Context, o Options) (*Demo, error) {
	start := time.Now()
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "%6.1fs  "+format+"\n", append([]any{time.Since(start).Seconds()}, args...)...)
		}
	}
	var ds *dataset.Dataset
	var err error
	if o.FS != nil {
		ds, err = dataset.LoadFS(o.FS, o.Data)
	} else {
		ds, err = dataset.Load(o.Data)
	}
	if err != nil {
		return nil, err
	}
	if ds.Qrels == nil || ds.Candidates == nil {
		return nil, fmt.Errorf("demo: %s needs judgments (qrels/test.tsv) and candidate lists (candidates.trec)", o.Data)
	}
	if err := checkFresh(o.Dir); err != nil {
		return nil, err
	}
	ds, dropped := dedupe(ds)
	folds := ds.Folds(5)
	test := folds[0]
	train := ds.Subset(dataset.NotInSet(test))
	d := &Demo{Dataset: ds, Test: test, PipelinePath: filepath.Join(o.Dir, "pipeline.yaml")}
	for _, q := range train.Queries {
		d.Train = append(d.Train, q.ID)
	}
	name := o.Data
	if o.FS != nil {
		name += " (built in)"
	}
	logf("%s: %d documents (%d duplicates left out), %d queries (%d to train on, %d held out)", name, len(ds.Corpus), dropped, len(ds.Queries), len(d.Train), len(test))

	types := rerank.StageTypes()
	var specs []rerank.StageSpec
	for _, t := range []string{"tfidf", "bm25", "overlap", "length"} {
		if slices.Contains(types, t) {
			specs = append(specs, rerank.StageSpec{Type: t})
		}
	}
	if slices.Contains(types, tweak.Method) {
		path := filepath.Join(o.Dir, "models", "tweak.model")
		if err := trainTWEAK(ctx, ds, train, path); err != nil {
			return nil, err
		}
		specs = append(specs, rerank.StageSpec{Type: tweak.Method, Model: "models/tweak.model"})
		logf("trained TWEAK term weights on %d queries", len(d.Train))
	}
	if len(specs) == 0 {
		return nil, errors.New("demo: this build registers none of the demo's stage types")
	}

	cfg := &rerank.Config{Window: Window, Stages: specs, Fusion: rerank.FusionSpec{Method: "none"}}
	if err := rerank.WriteConfig(d.PipelinePath, cfg); err != nil {
		return nil, err
	}
	d.Index, err = index.Create(filepath.Join(o.Dir, "index"))
	if err != nil {
		return nil, err
	}
	if err := d.fill(ctx, cfg, train); err != nil {
		d.Close()
		return nil, err
	}
	logf("indexed %d documents with payloads; fusion of %v learned", len(ds.Corpus), d.Stages)
	return d, nil
}

// outputs are the files and folders Build writes in its directory.
var outputs = []string{"index", "pipeline.yaml", "fusion.model", filepath.Join("models", "tweak.model")}

// checkFresh refuses a directory holding any of Build's outputs before
// anything is written: building there would overwrite a pipeline (an
// earlier demo's, or one of the user's) and then fail on the index.
func checkFresh(dir string) error {
	for _, name := range outputs {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("demo: %s already holds %s, from an earlier demo or of your own; serve an earlier demo with `semrank serve --index %s --pipeline %s`, or remove it (or choose another folder) to build the demo again",
				dir, name, filepath.Join(dir, "index"), filepath.Join(dir, "pipeline.yaml"))
		}
	}
	return nil
}

// fill indexes the corpus with the payloads of cfg's stages, learns the
// fusion on train and rewrites the pipeline file with it.
func (d *Demo) fill(ctx context.Context, cfg *rerank.Config, train *dataset.Dataset) error {
	p, _, err := rerank.LoadPipeline(d.PipelinePath, rerank.EnvFor(d.Index))
	if err != nil {
		return err
	}
	encs := append([]index.PayloadEncoder{index.TermsEncoder{}}, p.Encoders()...)
	if err := d.Index.Add(ctx, d.Dataset.Corpus, encs, nil); err != nil {
		return err
	}
	if err := d.Index.Compact(ctx); err != nil {
		return err
	}
	// The stages read the payloads just stored: they look for them at
	// each score, not only when built.
	d.Stages = p.StageNames()
	examples, err := offline.Examples(ctx, d.Index, retrieval(train), p)
	if err != nil {
		return err
	}
	lin, err := learn.TrainLinear(examples, learn.LinearOptions{})
	if err != nil {
		return err
	}
	b := lin.Bundle()
	b.Manifest.TrainingFingerprint = train.Fingerprint()
	if err := b.Save(filepath.Join(filepath.Dir(d.PipelinePath), "fusion.model")); err != nil {
		return err
	}
	cfg.Fusion = rerank.FusionSpec{Method: "linear", Model: "fusion.model"}
	return rerank.WriteConfig(d.PipelinePath, cfg)
}

// retrieval returns ds without its candidate lists, so candidates are
// retrieved from the whole index as the server does.
func retrieval(ds *dataset.Dataset) *dataset.Dataset {
	r := *ds
	r.Candidates = nil
	return &r
}

// trainTWEAK trains TWEAK with the paper's defaults on train's candidate
// lists; document frequencies come from the whole corpus, the query log
// from the training queries.
func trainTWEAK(ctx context.Context, all, train *dataset.Dataset, path string) error {
	texts := make([]string, len(all.Corpus))
	for i, doc := range all.Corpus {
		texts[i] = doc.FullText()
	}
	qtexts := make([]string, len(train.Queries))
	for i, q := range train.Queries {
		qtexts[i] = q.FullText()
	}
	st := tweak.Stats{DF: tweak.CountDF(texts), QF: tweak.CountDF(qtexts)}
	set, err := tweak.NewSet(train, nil, st, true)
	if err != nil {
		return err
	}
	m, err := tweak.Train(ctx, set, tweak.DefaultConfig(), tweak.Options{})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return m.Save(path)
}
