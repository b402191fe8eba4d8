// Package recipe trains a complete rerank pipeline — every stage's model
// and the fusion of their scores — from judged queries, and evaluates it.
//
// The fusion learns how much to trust each stage from stage scores on
// queries the stage models did not see (cross-fitting): the training
// queries are split into folds, each fold is scored by stage models trained
// on the other folds, and the fusion is trained on those out-of-fold
// scores. Scores of stages on their own training queries are optimistic,
// and a fusion trained on them learns to trust overfitted stages. The
// final stage models are then trained on all training queries.
package recipe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"golang.org/x/sync/errgroup"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/learn"
	"github.com/semrank/semrank/rerank/offline"
	"github.com/semrank/semrank/rerank/publish"
)

// Recipe describes a pipeline to train.
type Recipe struct {
	Stages []rerank.StageSpec // trainable stages have a registered trainer
	Fusion string             // "linear" (default) or "lambdamart"; without judgments, "agreement" (default) or "equal"
	L2     float64            // L2 penalty of a linear fusion; see learn.LinearOptions
	Folds  int                // cross-fitting folds, at least 2; 5 when zero
	Window int                // rerank window; rerank.DefaultWindow when zero
	Text   []string           // unlabeled in-domain text for the trainers
	Log    io.Writer          // progress messages; nil for none
	Seed   uint64
	// Index, when set, is the index the pipeline will rerank, any Bleve
	// index: the stages' candidate lists and the fusion's examples come
	// from its first stage and its documents, read through Fields and
	// FirstStage, which the published pipeline names too. The training
	// data's corpus must then be the index's documents as the pipeline
	// reads them (rerank.IndexCorpus). Unset, fit indexes the training
	// corpus into a semrank index of its own.
	Index      bleve.Index
	Fields     rerank.Fields
	FirstStage rerank.FirstStage
	// Regularize, when set, is the fusion.regularize of the pipelines r
	// publishes (see rerank.FusionSpec): their fused scores are
	// smoothed over the window. Stages and fusion are trained and
	// chosen without it.
	Regularize *map[string]any

	// supersedes names files made from the pipeline in the output
	// directory (a run file scored with it), which the new pipeline
	// replaces: they are removed just before it is published, so that a
	// run interrupted before it writes them again leaves them missing
	// rather than stale beside a pipeline they do not come from.
	supersedes []string
}

func (r *Recipe) logf(format string, args ...any) { logTo(r.Log)(format, args...) }

// logMu orders the lines of recipes' logs written from concurrent jobs.
var logMu sync.Mutex

// logTo returns a function that writes a line to w, formatted as
// fmt.Printf formats, and nothing when w is nil: the progress log of a
// recipe or an experiment. Lines written at once from several goroutines
// do not interleave.
func logTo(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) {
		if w != nil {
			logMu.Lock()
			defer logMu.Unlock()
			fmt.Fprintf(w, format+"\n", args...)
		}
	}
}

// CorpusIndex indexes ds's corpus (with term-count payloads) into a new
// index under dir. When indexing fails or ctx is cancelled, the index is
// removed if dir did not exist before, so that no partial index is left
// to be taken for a whole one (or to stop the next run).
func CorpusIndex(ctx context.Context, ds *dataset.Dataset, dir string) (*index.Index, error) {
	_, statErr := os.Lstat(dir)
	idx, err := index.Create(dir)
	if err != nil {
		return nil, err
	}
	err = idx.Add(ctx, ds.Corpus, []index.PayloadEncoder{index.TermsEncoder{}}, nil)
	if err == nil {
		err = idx.Compact(ctx)
	}
	if err != nil {
		idx.Close()
		if errors.Is(statErr, fs.ErrNotExist) {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	return idx, nil
}

// Fit trains the recipe on train (dev, when set, serves early stopping of
// the stages and of a LambdaMART fusion) and writes the models
// (dir/models/), the fusion (dir/fusion.model) and dir/pipeline.yaml. It
// returns the pipeline file's path.
//
// Everything is trained into a staging directory inside dir (.fit-*,
// removed when Fit returns) and published only once the whole pipeline
// is trained: a Fit that fails or whose ctx is cancelled leaves a
// pipeline already in dir as it was. Publishing renames the stage models
// into dir/models one by one, then fusion.model, and pipeline.yaml last,
// which lists every model's checksum: a reader of the old pipeline.yaml
// that meets a new model during those few renames fails to load, saying
// to try again, rather than load a mixed pipeline. Models of the old
// pipeline that the new one does not use are then removed; other files
// in dir/models are kept (see publishConfig). Should a rename fail, the
// error names the file and says that the pipeline in dir may be
// inconsistent.
//
// Fit holds dir's lock while it runs (see lockOut): a second Fit or
// recipe run on dir fails at once, and staging directories of a killed
// one are removed first.
func (r *Recipe) Fit(ctx context.Context, train, dev *dataset.Dataset, dir string) (string, error) {
	if _, err := r.check(train); err != nil {
		return "", err
	}
	lock, err := lockOut(dir, r.logf)
	if err != nil {
		return "", err
	}
	defer lock.Release()
	return r.fit(ctx, train, dev, dir)
}

// check refuses what fit cannot train, before anything is written, and
// returns the number of cross-fitting folds.
func (r *Recipe) check(train *dataset.Dataset) (int, error) {
	if train.Qrels == nil {
		return 0, fmt.Errorf("recipe: training data %s has no judgments", train.Dir)
	}
	folds, err := foldCount(r.Folds)
	if err != nil {
		return 0, err
	}
	return folds, checkFusion(r.Fusion)
}

// fit is Fit in a directory whose lock the caller holds.
func (r *Recipe) fit(ctx context.Context, train, dev *dataset.Dataset, dir string) (string, error) {
	folds, err := r.check(train)
	if err != nil {
		return "", err
	}
	// The staging directory is inside dir so that publishing is a rename
	// on one file system. It also holds the scratch files (indexes, the
	// folds' models), which publishing leaves behind, so that what a
	// killed fit leaves is in dir, for the next run's sweep (as is the
	// SemEval recipe's dev index).
	staging, err := os.MkdirTemp(dir, stagingPattern)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(staging)
	tmp := filepath.Join(staging, ".scratch")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return "", err
	}
	start := time.Now()
	idx, closeIdx, err := r.indexOf(ctx, train, filepath.Join(tmp, "train.idx"))
	if err != nil {
		return "", err
	}
	defer closeIdx()

	// Out-of-fold stage scores for the fusion, and the final stage models
	// on every training query: independent jobs, run on every core, each
	// writing its own directory; examples are kept in fold order.
	anyTrainable := false
	for _, s := range r.Stages {
		anyTrainable = anyTrainable || rerank.Trainable(s.Type)
	}
	var foldSets [][]string
	if anyTrainable {
		foldSets = train.Folds(folds)
	}
	foldExamples := make([][]learn.Example, len(foldSets))
	var specs []rerank.StageSpec
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for k, fold := range foldSets {
		g.Go(func() error {
			inner := train.Subset(dataset.NotInSet(fold))
			held := train.Subset(dataset.InSet(fold))
			specs, err := r.trainStages(gctx, inner, nil, idx, filepath.Join(tmp, fmt.Sprintf("fold%d", k)))
			if err != nil {
				return err
			}
			if foldExamples[k], err = r.examples(gctx, specs, idx, held); err != nil {
				return err
			}
			r.logf("fold %d/%d: stages trained on %d queries, scored %d (%s)", k+1, folds, len(inner.Qrels), len(foldExamples[k]), time.Since(start).Round(time.Second))
			return nil
		})
	}
	g.Go(func() error {
		var err error
		if specs, err = r.trainStages(gctx, train, dev, idx, filepath.Join(staging, "models")); err != nil {
			return err
		}
		r.logf("final stage models trained (%s)", time.Since(start).Round(time.Second))
		return nil
	})
	if err := g.Wait(); err != nil {
		return "", err
	}
	examples := slices.Concat(foldExamples...)
	if !anyTrainable {
		if examples, err = r.examples(ctx, specs, idx, train); err != nil {
			return "", err
		}
	}

	fusionPath := filepath.Join(staging, "fusion.model")
	method := r.Fusion
	switch method {
	case "", "linear":
		method = "linear"
		lin, err := learn.TrainLinear(examples, learn.LinearOptions{L2: r.L2})
		if err != nil {
			return "", err
		}
		b := lin.Bundle()
		b.Manifest.TrainingFingerprint = train.Fingerprint()
		if err := b.Save(fusionPath); err != nil {
			return "", err
		}
	case "lambdamart":
		var valid []learn.Example
		if dev != nil && dev.Qrels != nil {
			didx, closeDev, err := r.indexOf(ctx, dev, filepath.Join(tmp, "dev.idx"))
			if err != nil {
				return "", err
			}
			defer closeDev()
			if valid, err = r.examples(ctx, specs, didx, dev); err != nil {
				return "", err
			}
		}
		m, err := learn.TrainLambdaMART(examples, valid, learn.LambdaMARTOptions{})
		if err != nil {
			return "", err
		}
		b := m.Bundle()
		b.Manifest.TrainingFingerprint = train.Fingerprint()
		if err := b.Save(fusionPath); err != nil {
			return "", err
		}
	}
	r.logf("fusion (%s) trained on %d queries (%s)", method, len(examples), time.Since(start).Round(time.Second))

	cfg := r.config(specs, r.published(rerank.FusionSpec{Method: method, Model: "fusion.model"}))
	return r.publishConfig(ctx, cfg, staging, dir)
}

// publishConfig writes cfg, whose stages were trained into staging, to
// staging/pipeline.yaml as if trained into dir directly, with the
// checksum of every file it publishes, and publishes the pipeline into
// dir unless ctx is cancelled. It returns the published pipeline file's
// path.
//
// The checksums make the series of renames that publishing is safe to
// read: a pipeline loaded from dir while they run (a server reloading)
// either gets one pipeline's files or fails, saying to load again (see
// rerank.Config.Checksums). They also say which files in dir/models are
// this recipe's own: those the pipeline it replaces listed, which the
// new one no longer uses and which nobody has changed since, are removed
// once the new pipeline is in place (a rerun with fewer stages); other
// files there are kept.
func (r *Recipe) publishConfig(ctx context.Context, cfg *rerank.Config, staging, dir string) (string, error) {
	for i := range cfg.Stages {
		cfg.Stages[i] = cfg.Stages[i].Rebase(staging, dir).RelativeTo(dir)
	}
	files, err := stagedModels(staging)
	if err != nil {
		return "", err
	}
	if cfg.Fusion.Model != "" {
		files = append(files, cfg.Fusion.Model)
	}
	if err := publish.RecordChecksums(cfg, staging, files...); err != nil {
		return "", err
	}
	if err := rerank.WriteConfig(filepath.Join(staging, "pipeline.yaml"), cfg); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err // cancelled: the pipeline in dir stays as it was
	}
	path := filepath.Join(dir, "pipeline.yaml")
	// A pipeline file that is missing or cannot be read lists nothing
	// to remove.
	old, _ := rerank.ReadConfig(path)
	var removed []string
	for _, f := range r.supersedes {
		err := os.Remove(f)
		if err == nil {
			removed = append(removed, f)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("recipe: removing %s, made from the pipeline being replaced: %w (nothing in %s was replaced)", f, err, dir)
		}
	}
	if err := renameInto(staging, dir, append(files, "pipeline.yaml")); err != nil {
		if len(removed) > 0 {
			err = fmt.Errorf("%w; before that, %s, made from the pipeline being replaced, was removed", err, strings.Join(removed, " and "))
		}
		return "", err
	}
	if old != nil {
		r.pruneModels(dir, old.Checksums, cfg)
	}
	return path, nil
}

// stagedModels lists the files under staging/models, relative to staging
// and slash-separated.
func stagedModels(staging string) ([]string, error) {
	var files []string
	models := filepath.Join(staging, "models")
	err := filepath.WalkDir(models, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == models {
				return nil // no stage wrote a model
			}
			return err
		}
		if !d.IsDir() {
			rel, err := filepath.Rel(staging, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}

// renameInto moves the files, relative to staging and in order, into dir;
// files under models/ go to dir/models, keeping the files there they do
// not replace. Each rename replaces its file atomically; together they
// are not atomic, so a failed rename is reported as possibly leaving the
// pipeline in dir inconsistent.
func renameInto(staging, dir string, files []string) error {
	if err := os.MkdirAll(filepath.Join(dir, "models"), 0o755); err != nil {
		return err
	}
	for i, rel := range files {
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		err := os.MkdirAll(filepath.Dir(dst), 0o755)
		if err == nil {
			err = os.Rename(filepath.Join(staging, filepath.FromSlash(rel)), dst)
		}
		if err != nil {
			err = linkErr(err)
			if i == 0 {
				return fmt.Errorf("recipe: publishing the trained pipeline: %s: %w (nothing in %s was replaced)", dst, err, dir)
			}
			return fmt.Errorf("recipe: publishing the trained pipeline: %s: %w; the pipeline in %s may be inconsistent: %d of %d new files were moved in, but its pipeline.yaml was not replaced; train again to replace the whole pipeline", dst, err, dir, i, len(files))
		}
	}
	return nil
}

// pruneModels removes from dir/models the files the replaced pipeline
// listed (old) that the new one (cfg) neither lists nor names otherwise
// (a model it reuses rather than retrains) and whose content is still
// what old lists: models an earlier run of the recipe wrote and no stage
// reads any more. A file that cannot be removed is reported, not an
// error: the new pipeline is in place.
func (r *Recipe) pruneModels(dir string, old map[string]string, cfg *rerank.Config) {
	keep := map[string]bool{}
	for p := range cfg.Checksums {
		keep[absPath(filepath.Join(dir, filepath.FromSlash(p)))] = true
	}
	for _, f := range cfg.Files(dir, true) {
		keep[absPath(f)] = true
	}
	var removed []string
	for key, sum := range old {
		p := path.Clean(key)
		if !strings.HasPrefix(p, "models/") || !filepath.IsLocal(filepath.FromSlash(p)) {
			continue
		}
		file := filepath.Join(dir, filepath.FromSlash(p))
		if keep[absPath(file)] {
			continue
		}
		if got, err := rerank.FileSHA256(file); err != nil || !strings.EqualFold(got, sum) {
			continue // gone, or changed by someone else: not ours to remove
		}
		if err := os.Remove(file); err != nil {
			r.logf("could not remove %s, which the new pipeline no longer uses: %v", file, err)
			continue
		}
		removed = append(removed, p)
	}
	if len(removed) > 0 {
		slices.Sort(removed)
		r.logf("removed from %s the models of the earlier pipeline that the new one no longer uses: %s", dir, strings.Join(removed, ", "))
	}
}

// absPath returns p made absolute and clean, or p clean when that fails,
// for comparing paths named relative to different folders.
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// checkFusion refuses a fusion method the recipes cannot train, before
// any stage is trained.
func checkFusion(method string) error {
	switch method {
	case "", "linear", "lambdamart":
		return nil
	}
	return fmt.Errorf("recipe: unknown fusion %q (linear, lambdamart)", method)
}

// foldCount returns the number of folds n asks for: 5 when n is 0. Fewer
// than 2 folds leave nothing to train on, or panic dataset.Dataset.Folds.
func foldCount(n int) (int, error) {
	switch {
	case n == 0:
		return 5, nil
	case n < 2:
		return 0, fmt.Errorf("recipe: folds %d, want at least 2 (0 means the default, 5)", n)
	}
	return n, nil
}

// indexOf returns the index ds's queries are searched in: r.Index, or a
// semrank index of ds's corpus built at dir; and what closes it.
func (r *Recipe) indexOf(ctx context.Context, ds *dataset.Dataset, dir string) (bleve.Index, func(), error) {
	if r.Index != nil {
		return r.Index, func() {}, nil
	}
	idx, err := CorpusIndex(ctx, ds, dir)
	if err != nil {
		return nil, nil, err
	}
	return idx, func() { idx.Close() }, nil
}

// config is the pipeline of the stages specs describe, fused as f says,
// over r's fields and first stage.
func (r *Recipe) config(specs []rerank.StageSpec, f rerank.FusionSpec) *rerank.Config {
	return &rerank.Config{Window: r.Window, Fields: r.Fields, FirstStage: r.FirstStage, Stages: specs, Fusion: f}
}

// published returns f with r's step after the fusion (Regularize): the
// fusion of a pipeline r publishes, and of one that ranks as it does.
func (r *Recipe) published(f rerank.FusionSpec) rerank.FusionSpec {
	f.Regularize = r.Regularize
	return f
}

// trainStages trains r's stages on train into dir, logging each trained
// stage's time, since one can take minutes.
func (r *Recipe) trainStages(ctx context.Context, train, dev *dataset.Dataset, idx bleve.Index, dir string) ([]rerank.StageSpec, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Trainers learn from candidate lists. Without given lists (full
	// retrieval), they see what they will rerank: the first stage's top
	// window. The copy is the trainers' alone: fusion examples keep
	// retrieving, so no given-rank feature appears in training only.
	if train.Candidates == nil && train.Qrels != nil && len(train.Queries) > 0 {
		w := r.Window
		if w <= 0 {
			w = rerank.DefaultWindow
		}
		first, err := rerank.FirstStageOf(idx, r.config(nil, rerank.FusionSpec{}), w)
		if err != nil {
			return nil, err
		}
		run, _, err := offline.RunDataset(ctx, idx, train, first, w, nil)
		if err != nil {
			return nil, err
		}
		t := *train
		t.Candidates = &run
		train = &t
	}
	si, _ := idx.(*index.Index) // trainers read a semrank index's statistics
	out := make([]rerank.StageSpec, len(r.Stages))
	for i, s := range r.Stages {
		start := time.Now()
		t, err := rerank.TrainStage(ctx, s, rerank.TrainInput{Train: train, Dev: dev, Index: si, Text: r.Text, Dir: dir, Seed: r.Seed})
		if err != nil {
			return nil, err
		}
		if rerank.Trainable(s.Type) {
			r.logf("  %s trained on %d queries (%s)", s.DisplayName(s.Type), len(train.Qrels), time.Since(start).Round(100*time.Millisecond))
		}
		out[i] = t
	}
	return out, nil
}

// examples scores ds's judged queries with the stages specs describe.
func (r *Recipe) examples(ctx context.Context, specs []rerank.StageSpec, idx bleve.Index, ds *dataset.Dataset) ([]learn.Example, error) {
	p, err := r.config(specs, rerank.FusionSpec{Method: "none"}).Build(rerank.EnvOf(idx))
	if err != nil {
		return nil, err
	}
	return offline.Examples(ctx, idx, ds, p)
}
