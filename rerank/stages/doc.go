// Package stages adapts semrank's models to rerank.Stage, adds lexical and
// metadata stages (tfidf, bm25, rm3, overlap, length, meta, surface,
// thread), and registers each under a type name for pipeline files, with a
// trainer (rerank.RegisterTrainer) for the stage types recipes train.
// Each stage type's options are one struct (TFIDFOptions, TweakOptions,
// ...), which its factory and its trainer decode with
// rerank.StageSpec.DecodeOptions and semrank train's flags fill.
// Import it for its side effects:
//
//	import _ "github.com/semrank/semrank/rerank/stages"
//
// rerank.TrainInput says what each trainer needs to learn from.
package stages

// Each stage type lives in its own file, except that deepmatch.go holds
// DeepMatch and its bilinear and Siamese baselines, which share one model
// format. Trainers live in the *_train.go files, quality's beside its stage.
