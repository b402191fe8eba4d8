package rerank

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// A WindowMemo holds what several stages scoring one window would each
// compute alike, such as the query terms' counts in every candidate read
// off the same payloads, so that it is computed once per window rather
// than once per stage. A search gives one to the window's stages through
// their context (WindowMemoOf), from the choice of the documents to load
// (DocReader) to the stages' scores; a stage scoring without one
// computes as usual.
type WindowMemo struct {
	table *memoTable
	// waited, when set, is where Do adds the time it waits for a result
	// another stage computes (see waitingOn).
	waited *atomic.Int64
}

// memoTable is the results a window's stages share.
type memoTable struct {
	mu sync.Mutex
	m  map[any]*memoEntry
	// ahead is the window's stages scored ahead, if any (scoreAhead).
	ahead atomic.Pointer[ahead]
}

type memoEntry struct {
	once sync.Once
	v    any
	err  error
}

type windowMemoKey struct{}

// withWindowMemo returns ctx carrying a new, empty WindowMemo.
func withWindowMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, windowMemoKey{}, &WindowMemo{table: &memoTable{m: map[any]*memoEntry{}}})
}

// waitingOn returns ctx with its WindowMemo (if any) adding to waited
// the time its Do calls wait for results computed by others: one stage's
// share of the window's time, as ScoreStages weighs the stages' costs,
// is its own work, not its wait for another's.
func waitingOn(ctx context.Context, waited *atomic.Int64) context.Context {
	m := WindowMemoOf(ctx)
	if m == nil {
		return ctx
	}
	return context.WithValue(ctx, windowMemoKey{}, &WindowMemo{table: m.table, waited: waited})
}

// WindowMemoOf returns the memo of the window ctx scores, or nil.
func WindowMemoOf(ctx context.Context) *WindowMemo {
	m, _ := ctx.Value(windowMemoKey{}).(*WindowMemo)
	return m
}

// Do returns f's result for key, calling f once however many stages ask,
// at once or in turn; the others wait for it. key must be comparable and
// name everything f's result depends on besides the window. On a nil
// memo Do calls f.
func (m *WindowMemo) Do(key any, f func() (any, error)) (any, error) {
	if m == nil {
		return f()
	}
	t := m.table
	t.mu.Lock()
	e, ok := t.m[key]
	if !ok {
		e = &memoEntry{}
		t.m[key] = e
	}
	t.mu.Unlock()
	if m.waited == nil {
		e.once.Do(func() { e.v, e.err = f() })
		return e.v, e.err
	}
	start, ran := time.Now(), false
	e.once.Do(func() { ran = true; e.v, e.err = f() })
	if !ran {
		m.waited.Add(int64(time.Since(start)))
	}
	return e.v, e.err
}
