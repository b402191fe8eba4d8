package stages

import (
	"context"
	"runtime/debug"

	"github.com/semrank/semrank/rerank"
)

// queryKey names, in a window's memo, what a stage computes from the
// query's text alone.
type queryKey struct {
	stage rerank.Stage
	text  string
}

// prepared returns what stage computes from q alone by compute, once a
// window (rerank.WindowMemo): ahead of scoring when the search prepares
// its stages' queries (rerank.QueryPreparer), else when Score first asks.
// A panic in compute is the stage's error (rerank.StagePanic), wherever
// it ran. Callers must not modify what it returns.
func prepared[T any](ctx context.Context, stage rerank.Stage, q rerank.Query, compute func() (T, error)) (v T, err error) {
	r, err := rerank.WindowMemoOf(ctx).Do(queryKey{stage, q.Text}, func() (res any, err error) {
		defer func() {
			if p := recover(); p != nil {
				res, err = nil, &rerank.StagePanic{Stage: stage.Name(), Value: p, Stack: debug.Stack()}
			}
		}()
		return compute()
	})
	if err != nil {
		return v, err
	}
	return r.(T), nil
}
