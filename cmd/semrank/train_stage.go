package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// trainStageTo trains spec's model on the judged lists of the BEIR
// directory data (flag --data) and moves the model file to out (flag
// --out), noting on w when out is a model a pipeline lists (see
// trainModel).
func trainStageTo(ctx context.Context, w io.Writer, spec rerank.StageSpec, data, out string) error {
	if data == "" || out == "" {
		return fmt.Errorf("--data and --out are required")
	}
	if err := checkOutputOf("--out", out, []string{data}); err != nil {
		return err
	}
	if err := checkRetrainOutput(w, out); err != nil {
		return err
	}
	if err := checkJudged("--data", data); err != nil {
		return err
	}
	ds, err := dataset.Load(data)
	if err != nil {
		return err
	}
	return trainModel(ctx, spec, rerank.TrainInput{Train: ds}, out)
}

// stageSpec returns the spec of a stage of type typ with options o: the
// stage type's options struct (package stages), which the command's
// flags filled.
func stageSpec(typ string, o any) (rerank.StageSpec, error) {
	opts, err := rerank.OptionsOf(o)
	return rerank.StageSpec{Type: typ, Options: opts}, err
}

// trainModel trains spec's model on in through the stage's registered
// trainer (the one recipes use, so the command and the recipes cannot
// train differently) and moves the model file to out. The model is
// written into a temporary folder beside out first (in.Dir): an
// interrupted or failed run leaves out as it was.
func trainModel(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput, out string) error {
	dir, err := os.MkdirTemp(filepath.Dir(out), "."+spec.Type+"-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	in.Dir = dir
	spec, err = rerank.TrainStage(ctx, spec, in)
	if err != nil {
		return err
	}
	if err := os.Rename(spec.Model, out); err != nil {
		return fmt.Errorf("moving the trained model to %s: %w", out, err)
	}
	return nil
}

// stepBar returns a TrainInput.Progress that shows a trainer's steps
// under label, and the function that ends it.
func stepBar(label string) (func(rerank.TrainStep), func()) {
	var bar *progress
	return func(s rerank.TrainStep) {
			if bar == nil {
				bar = newBar(s.Total, label)
			}
			desc := fmt.Sprintf("%s %s %d loss %.4f", label, s.Phase, s.Iter, s.Loss)
			if !math.IsNaN(s.DevMAP) {
				desc += fmt.Sprintf(" dev MAP %.4f", s.DevMAP)
			}
			bar.Describe(desc)
			bar.Set(min(s.Done, s.Total))
		}, func() {
			if bar != nil {
				bar.Finish()
			}
		}
}
