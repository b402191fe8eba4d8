package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/rerank"
)

// trainStageTo trains spec's model on the judged lists of the BEIR
// directory data (flag --data) through the stage's registered trainer (the
// one recipes use, so the command and the recipes cannot train
// differently) and moves the model file to out (flag --out), noting on w
// when out is a model a pipeline lists. The model is written into a
// temporary folder beside out first: an interrupted or failed run leaves
// out as it was.
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
	ds, err := eval.LoadDataset(data)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(filepath.Dir(out), "."+spec.Type+"-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	spec, err = rerank.TrainStage(ctx, spec, rerank.TrainInput{Train: ds, Dir: dir})
	if err != nil {
		return err
	}
	if err := os.Rename(spec.Model, out); err != nil {
		return fmt.Errorf("moving the trained model to %s: %w", out, err)
	}
	return nil
}
