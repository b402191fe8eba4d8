package rerank

import (
	"context"
	"fmt"
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
	trainers   = map[string]Trainer{}
)

// RegisterTrainer makes a stage type trainable by recipes. It panics when
// typ is registered twice.
func RegisterTrainer(typ string, t Trainer) {
	trainersMu.Lock()
	defer trainersMu.Unlock()
	if _, dup := trainers[typ]; dup {
		panic("rerank: trainer registered twice: " + typ)
	}
	trainers[typ] = t
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
func TrainStage(ctx context.Context, spec StageSpec, in TrainInput) (StageSpec, error) {
	trainersMu.RLock()
	t, ok := trainers[spec.Type]
	trainersMu.RUnlock()
	if !ok {
		return spec, nil
	}
	out, err := t(ctx, spec, in)
	if err != nil {
		return spec, fmt.Errorf("rerank: training %s: %w", spec.Type, err)
	}
	if out.Name == "" {
		out.Name = spec.Name
	}
	return out, nil
}
