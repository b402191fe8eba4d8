package rerank

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
)

// TrainInput is what a stage trainer learns from. TrainStage refuses an
// input with neither Train nor Text, and one without Dir.
type TrainInput struct {
	// Train holds the judged queries supervised trainers learn from: a
	// corpus, queries, judgments (Qrels) and candidate lists (Candidates).
	// What a trainer needs of it depends on the stage type: tweak and the
	// matching stages (deepmatch, bilinear, siamese) need judgments and
	// candidate lists; quality, lsa, s2net and dse need judgments, and
	// take each query's judged documents as its list when there are no
	// candidate lists. A trainer refuses a Train lacking what it needs
	// with an error. Only the unsupervised trainers (wmd, ssg) train
	// without it, on Text; for every other trainer a nil Train is
	// ErrNoTrainingData.
	Train *dataset.Dataset
	// Dev holds optional judged queries for early stopping (s2net, dse and
	// the matching stages); never queries scored later. It may be nil.
	Dev *dataset.Dataset
	// Index holds the corpus the stage will rerank (for term statistics);
	// it may be nil.
	Index *index.Index
	// Text is unlabeled text from the same domain (for word vectors, topic
	// models, unsupervised pretraining); it may be empty.
	Text []string
	// Corpora are more collections from the domain, judged or not: the
	// concept trainers (lsa, s2net, dse) read their texts and comparable
	// pairs (title–body, query–relevant document) beside Train's.
	Corpora []*dataset.Dataset
	// Dir is the directory trainers write model files into, created when
	// missing; the trained spec's Model (and file options such as ssg's
	// topics) name files inside it. It must be set: TrainStage refuses an
	// empty Dir rather than write into the working directory (give "."
	// for that).
	Dir string
	// Seed seeds the trainers' random choices.
	Seed uint64
	// Progress, when set, is called after each step of training (an
	// iteration or an epoch), so that a caller can show how far a
	// trainer that runs for minutes has come.
	Progress func(TrainStep)
	// Log, when set, receives a trainer's notes in lines: the sizes it
	// trained on and the choices it made (the α TWEAK chose).
	Log io.Writer
}

// TrainStep is one step of a trainer, reported to TrainInput.Progress.
type TrainStep struct {
	Phase  string  // the part of training: "lbfgs", "pretrain-1", "finetune", "epoch"
	Iter   int     // the step within Phase, from 1; 0 is the state before the first
	Loss   float64 // the training loss
	DevMAP float64 // map@10 on held-out lists; NaN when there are none
	Done   int     // steps reported so far, this one included
	Total  int     // the most steps training can take (early stopping may end it sooner)
}

// ErrNoTrainingData is the error (wrapped) of training without data:
// TrainInput.Train is nil, and Text is empty or the trainer learns from
// judged queries, which Text cannot stand in for.
var ErrNoTrainingData = errors.New("no training data: TrainInput.Train is nil")

// Trainer trains the model of one stage type and returns the spec that
// uses it (Model set to a path inside in.Dir).
type Trainer func(ctx context.Context, spec StageSpec, in TrainInput) (StageSpec, error)

var (
	trainersMu sync.RWMutex
	trainers   = map[string]Trainer{}
)

// RegisterTrainer makes a stage type trainable by recipes. The trainer
// decodes the spec's options with DecodeOptions into the same struct as
// the stage's factory, which holds the training settings the stage itself
// ignores: a pipeline built from the trained spec (it keeps them) accepts
// them all the same. It panics when typ is registered twice.
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
// resulting spec; other specs come back unchanged. For a trainable type it
// refuses an input with neither Train nor Text (ErrNoTrainingData) and one
// with an empty Dir; the trainer refuses a Train lacking what it needs
// (see TrainInput).
// The trainer refuses options its stage type does not know.
func TrainStage(ctx context.Context, spec StageSpec, in TrainInput) (StageSpec, error) {
	trainersMu.RLock()
	t, ok := trainers[spec.Type]
	trainersMu.RUnlock()
	if !ok {
		return spec, nil
	}
	if in.Train == nil && len(in.Text) == 0 {
		return spec, fmt.Errorf("rerank: training %s: %w", spec.Type, ErrNoTrainingData)
	}
	if in.Dir == "" {
		return spec, fmt.Errorf("rerank: training %s: TrainInput.Dir is empty; give the directory to write model files into (\".\" for the working directory)", spec.Type)
	}
	out, err := t(ctx, spec, in)
	if err == nil {
		// Some trainers cannot stop midway (LSA's SVD): one cancelled
		// while it ran has not finished what it was asked.
		err = ctx.Err()
	}
	if err != nil {
		return spec, fmt.Errorf("rerank: training %s: %w", spec.Type, err)
	}
	if out.Name == "" {
		out.Name = spec.Name
	}
	return out, nil
}
