package rerank

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
)

// TrainInput is what a stage trainer learns from.
type TrainInput struct {
	Train *eval.Dataset // judged queries with their candidates
	Dev   *eval.Dataset // optional judged queries for early stopping; never those scored later
	// Index holds the corpus the stage will rerank (for term statistics);
	// it may be nil.
	Index *index.Index
	// Text is unlabeled text from the same domain (for word vectors, topic
	// models, unsupervised pretraining); it may be empty.
	Text []string
	Dir  string // directory to write model files into
	Seed uint64
}

// Trainer trains the model of one stage type and returns the spec that
// uses it (Model set to a path inside in.Dir).
type Trainer func(ctx context.Context, spec StageSpec, in TrainInput) (StageSpec, error)

var (
	trainersMu sync.RWMutex
	trainers   = map[string]registeredTrainer{}
)

type registeredTrainer struct {
	train   Trainer
	options []string
}

// RegisterTrainer makes a stage type trainable by recipes. options names
// every spec option the trainer reads through the option helpers: training
// settings the stage itself may ignore, which a pipeline built from the
// trained spec (it keeps them) accepts all the same. It panics when typ is
// registered twice.
func RegisterTrainer(typ string, t Trainer, options ...string) {
	trainersMu.Lock()
	defer trainersMu.Unlock()
	if _, dup := trainers[typ]; dup {
		panic("rerank: trainer registered twice: " + typ)
	}
	trainers[typ] = registeredTrainer{train: t, options: options}
}

// trainerOptions returns the options typ's trainer declares, nil when typ
// has no trainer.
func trainerOptions(typ string) []string {
	trainersMu.RLock()
	defer trainersMu.RUnlock()
	return trainers[typ].options
}

// Trainable reports whether a stage type has a trainer.
func Trainable(typ string) bool {
	trainersMu.RLock()
	defer trainersMu.RUnlock()
	_, ok := trainers[typ]
	return ok
}

// TrainStage trains spec's model when its type is trainable and returns the
// resulting spec; other specs come back unchanged.
//
// Options the trainer does not read are left to the stage: building the
// trained spec (as a recipe does right after training) rejects those the
// stage does not know either. A trainer reading an option it did not
// declare to RegisterTrainer is an error, since pipelines built from its
// specs would refuse that option.
func TrainStage(ctx context.Context, spec StageSpec, in TrainInput) (StageSpec, error) {
	trainersMu.RLock()
	t, ok := trainers[spec.Type]
	trainersMu.RUnlock()
	if !ok {
		return spec, nil
	}
	tracked, read := spec.track()
	out, err := t.train(ctx, tracked, in)
	if err != nil {
		return spec, fmt.Errorf("rerank: training %s: %w", spec.Type, err)
	}
	for _, n := range t.options {
		delete(read, n)
	}
	if len(read) > 0 {
		return spec, fmt.Errorf("rerank: training %s: the trainer read undeclared options %v (see RegisterTrainer)", spec.Type, slices.Sorted(maps.Keys(read)))
	}
	out.read = nil
	if out.Name == "" {
		out.Name = spec.Name
	}
	return out, nil
}
