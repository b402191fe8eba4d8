package main

import (
	"errors"
	"strings"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
)

// hint returns the command that makes what err says is missing, or "":
// the library's errors name what is missing, and only the command line
// knows its own commands.
func hint(err error) string {
	var nm *rerank.NeedsModelError
	switch {
	case errors.As(err, &nm):
		switch {
		case strings.Contains(nm.What, "word vectors"):
			return "semrank train embed writes word vectors; word2vec and GloVe files work too"
		case strings.Contains(nm.What, "topics"):
			return "semrank train topics writes one"
		case nm.Type == "fusion lambdamart":
			return "semrank train fusion --method lambdamart writes one"
		case rerank.Trainable(nm.Type):
			return "semrank train " + nm.Type + " writes one"
		}
	case errors.Is(err, index.ErrDamaged):
		return "semrank inspect --verify --index PATH names every damaged file; rebuild the index, or restore it from a copy"
	case errors.Is(err, index.ErrNotCounted):
		return "semrank attach --index PATH --pipeline FILE computes them"
	case errors.Is(err, tweak.ErrNoCandidates):
		return "write them with semrank run --data DIR --index IDX --out DIR/candidates.trec"
	}
	return ""
}

// withHint returns err's message followed by its hint, if any.
func withHint(err error) string {
	if h := hint(err); h != "" {
		return err.Error() + " (" + h + ")"
	}
	return err.Error()
}
