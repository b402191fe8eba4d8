package recipe

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
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index/convert"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/offline"
)

// SemEvalStages returns the stages of the SemEval-2016 recipe for a
// subtask, chosen by the ablations in docs/RESULTS.md (dev and 5-fold
// cross-validation): lexical features and TWEAK for both; for subtask B
// the concept-vector stages S2Net and LSA, which added most on top of the
// lexical features (word vectors, DSE and DeepMatch did not); for subtask A
// the forum metadata of a comment (its position in the thread, whether the
// asker wrote it, thread structure, surface text), its similarity to the
// other users' comments (peers), the question–answer
// matchers (bilinear, DeepMatch, Siamese), which the few B training
// queries are too few to train, and the question-independent answer
// quality model (the strongest single A stage; it hurts B, whose
// candidates are questions). The bilinear matcher takes three comments
// from other threads as negatives per good comment: trained only on the
// thread's own comments it learns what makes a comment good, with them
// also whether it answers this question (alone +0.040 MAP by CV).
func SemEvalStages(st convert.Subtask) []rerank.StageSpec {
	specs := LexicalStages()
	if st == convert.SubtaskA {
		specs = append(specs, metaStages()...)
		specs = append(specs, peersStage())
		return append(specs, Trained(
			rerank.StageSpec{Type: "tweak"},
			rerank.StageSpec{Type: "bilinear", Options: map[string]any{"neg_random": 3}},
			rerank.StageSpec{Type: "deepmatch"},
			rerank.StageSpec{Type: "siamese"},
			rerank.StageSpec{Type: "quality"},
		)...)
	}
	return append(specs, Trained(
		rerank.StageSpec{Type: "tweak"},
		rerank.StageSpec{Type: "s2net"},
		rerank.StageSpec{Type: "lsa"},
	)...)
}

// SemEvalOptions configure the SemEval-2016 experiment.
type SemEvalOptions struct {
	Subtask convert.Subtask
	Train   []string // XML files merged into the training set
	Dev     string   // XML file for the reported metrics, then for the second training
	Out     string   // output directory
	Fusion  string   // linear or lambdamart; "" picks the recipe's default
	// FusionL2 is the L2 penalty of a linear fusion; 0 picks
	// learn.LinearOptions' default, which did best by CV on both
	// subtasks (docs/RESULTS.md).
	FusionL2 float64
	Stages   []string // stage types to use instead of the recipe's (ablations); see ParseStages
	Folds    int
	// TrainOnly keeps the pipeline trained on the training files alone as
	// Out/pipeline.yaml. By default, once the dev metrics are measured,
	// the recipe is trained again on the training and dev files together
	// and that pipeline is Out/pipeline.yaml, while the training-only
	// pipeline behind the reported dev metrics moves to
	// Out/train/pipeline.yaml. More judged queries help most where there
	// are few: see "Training the final pipeline on train and dev" in
	// docs/RESULTS.md.
	TrainOnly bool
	Log       io.Writer
}

// SemEval converts the XML files, trains the recipe's pipeline on the
// training files, reports dev metrics (every stage alone and the fused
// pipeline, against the given IR order) to Log, and then, unless
// o.TrainOnly is set or dev has no judgments, trains the recipe again on
// training and dev queries together. Out/pipeline.yaml is the last
// pipeline trained; it scores any converted split with
// `semrank rerank --data SPLIT --pipeline Out/pipeline.yaml`. Dev metrics
// always come from a pipeline that never saw dev judgments
// (Out/train/pipeline.yaml when the recipe refits).
//
// Once its options are checked, SemEval locks Out (and Out/train before
// training there) for the rest of the run, as Fit does: a second run on
// Out fails at once. Each output appears complete or not at all: the
// converted splits replace Out/data as a whole once both are written,
// each pipeline is published as Fit does, and Out/dev.trec is written
// atomically. They are written one after another, so an interrupted run
// can leave some of them from an earlier run, but not an earlier
// dev.trec beside the pipeline that replaced the one it came from: it
// is removed just before that pipeline is published.
func SemEval(ctx context.Context, o SemEvalOptions) error {
	start := time.Now()
	logf := logTo(o.Log)
	if len(o.Train) == 0 {
		return fmt.Errorf("recipe: no training files")
	}
	if err := checkFusion(o.Fusion); err != nil {
		return err
	}
	if _, err := foldCount(o.Folds); err != nil {
		return err
	}
	fusion := o.Fusion
	if fusion == "" {
		fusion = "linear"
	}
	stages := SemEvalStages(o.Subtask)
	if len(o.Stages) > 0 {
		var err error
		if stages, err = ParseStages(o.Stages); err != nil {
			return err
		}
	}
	load := func(paths ...string) (*dataset.Dataset, error) {
		c := convert.NewSemEval(o.Subtask)
		for _, p := range paths {
			if err := c.AddFile(p); err != nil {
				return nil, err
			}
		}
		for _, n := range append(c.Clashes(), c.Unjudged()...) {
			logf("note: %s", n)
		}
		return c.Dataset(), nil
	}
	// Reading the input first leaves no output folder behind a mistyped
	// path.
	train, err := load(o.Train...)
	if err != nil {
		return err
	}
	var dev *dataset.Dataset
	if o.Dev != "" {
		if dev, err = load(o.Dev); err != nil {
			return err
		}
	}
	if dev != nil {
		if err := checkDevApart(train, dev, o.Dev); err != nil {
			return err
		}
	}
	textFiles := slices.Clone(o.Train)
	if o.Dev != "" {
		textFiles = append(textFiles, o.Dev)
	}
	// Out/data is replaced as a whole by the converted splits: refuse
	// before anything is written when that would delete what the recipe
	// did not write there, its own input files above all (the refit reads
	// them again).
	if err := checkDataDir(filepath.Join(o.Out, "data"), textFiles); err != nil {
		return err
	}
	text, err := convert.SemEvalText(textFiles...)
	if err != nil {
		return err
	}
	lock, err := lockOut(o.Out, logf)
	if err != nil {
		return err
	}
	defer lock.Release()
	err = writeDir(filepath.Join(o.Out, "data"), func(dir string) error {
		if err := train.Save(filepath.Join(dir, "split-train")); err != nil {
			return err
		}
		if dev == nil {
			return nil
		}
		return dev.Save(filepath.Join(dir, "split-dev"))
	})
	if err != nil {
		return err
	}
	r := &Recipe{Stages: stages, Fusion: fusion, L2: o.FusionL2, Folds: o.Folds, Window: 100, Text: text, Log: o.Log}
	logf("subtask %s: %d training queries, %d dev queries, stages %v, fusion %s", o.Subtask, len(train.Qrels), lenQrels(dev), stageNames(r.Stages), fusion)
	if dev == nil || dev.Qrels == nil {
		logf("no judged dev file: no dev metrics; the pipeline is trained on the training files only")
	}
	refit := !o.TrainOnly && dev != nil && dev.Qrels != nil
	dir := o.Out
	if refit {
		dir = filepath.Join(o.Out, "train")
		trainLock, err := lockOut(dir, logf)
		if err != nil {
			return err
		}
		defer trainLock.Release()
	}
	// Dev judgments stay out of this training entirely, early stopping
	// included (the stages hold out some training queries instead), so
	// the dev metrics are those of a pipeline that never saw them.
	// Out/dev.trec comes from this pipeline: the earlier one goes when
	// the pipeline it came from is replaced.
	r.supersedes = []string{filepath.Join(o.Out, "dev.trec")}
	path, err := r.fit(ctx, train, nil, dir)
	if err != nil {
		return err
	}
	r.supersedes = nil
	logf("wrote %s (%s)", path, time.Since(start).Round(time.Second))
	if dev == nil || dev.Qrels == nil {
		return nil
	}
	if err := reportDev(ctx, path, dev, filepath.Join(o.Out, "dev.trec"), o.Log); err != nil {
		return err
	}
	if refit {
		all, err := load(append(slices.Clone(o.Train), o.Dev)...)
		if err != nil {
			return err
		}
		logf("\nrefit on training and dev files: %d queries", len(all.Qrels))
		if path, err = r.fit(ctx, all, nil, o.Out); err != nil {
			// Fit leaves a pipeline already in o.Out as it was: say that
			// it is not the one this run was training.
			return fmt.Errorf("training on train and dev: %w; %s was not replaced (a pipeline there is from an earlier run); the training-only pipeline behind the dev metrics above is %s",
				err, filepath.Join(o.Out, "pipeline.yaml"), filepath.Join(dir, "pipeline.yaml"))
		}
		logf("wrote %s (trained on train and dev; the dev metrics above are from %s)", path, filepath.Join(dir, "pipeline.yaml"))
	}
	logf("total time %s", time.Since(start).Round(time.Second))
	return nil
}

// reportDev reranks dev with the pipeline at path, writes the fused run to
// runPath, and prints every stage's and the fused pipeline's metrics
// against the given order to w (stdout when nil). Dev's index is scratch
// in a staging directory beside runPath, so what a killed run leaves is
// swept by the next run there.
func reportDev(ctx context.Context, path string, dev *dataset.Dataset, runPath string, w io.Writer) error {
	scratch, err := os.MkdirTemp(filepath.Dir(runPath), stagingPattern)
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	o, err := offline.IndexFor(ctx, path, filepath.Join(scratch, "dev.idx"), dev, nil)
	if err != nil {
		return err
	}
	defer o.Close()
	runs, err := RunAll(ctx, o.Index, dev, o.Pipeline)
	if err != nil {
		return err
	}
	if err := runs.Runs["fused pipeline"].WriteFile(runPath, "semrank"); err != nil {
		return err
	}
	if w == nil {
		w = os.Stdout
	}
	fmt.Fprintf(w, "\ndev (%d queries):\n", len(dev.Qrels))
	return Table(w, dev.Qrels, runs, "given order", eval.MustParseMetrics("map@10,mrr@10,p@1,auc"), false)
}

// checkDevApart refuses a dev set that holds training questions (a copy
// of a training file under another name, or files that overlap): its
// metrics would be measured on queries the pipeline was trained on.
func checkDevApart(train, dev *dataset.Dataset, devFile string) error {
	trained := make(map[string]bool, len(train.Queries))
	for _, q := range train.Queries {
		trained[q.ID] = true
	}
	var shared []string
	for _, q := range dev.Queries {
		if trained[q.ID] {
			shared = append(shared, q.ID)
		}
	}
	if len(shared) > 0 {
		return fmt.Errorf("recipe: dev file %s holds %d of its %d queries in the training files too (first %q): the dev metrics would be measured on training queries", devFile, len(shared), len(dev.Queries), shared[0])
	}
	return nil
}

// checkDataDir refuses a data directory that the recipe would replace
// while it holds an input file or anything but the splits a recipe writes
// there (split-train, split-dev).
func checkDataDir(data string, inputs []string) error {
	if _, err := os.Lstat(data); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	realData, err := filepath.EvalSymlinks(data)
	if err != nil {
		return fmt.Errorf("recipe: %w", err)
	}
	for _, in := range inputs {
		realIn, err := filepath.EvalSymlinks(in)
		if err != nil {
			continue // read already, so it exists; nothing better to check
		}
		if under(realData, realIn) {
			return fmt.Errorf("recipe: input %s is inside %s, which the recipe replaces with its converted splits: move it out of the output folder or choose another output folder", in, data)
		}
	}
	entries, err := os.ReadDir(data)
	if err != nil {
		return fmt.Errorf("recipe: %s is replaced with the converted splits, but cannot be read: %w", data, err)
	}
	for _, e := range entries {
		if n := e.Name(); n != "split-train" && n != "split-dev" {
			return fmt.Errorf("recipe: %s holds %s, which no recipe wrote there; the recipe replaces %s as a whole with its converted splits: move it out or choose another output folder", data, n, data)
		}
	}
	return nil
}

func lenQrels(ds *dataset.Dataset) int {
	if ds == nil {
		return 0
	}
	return len(ds.Qrels)
}
