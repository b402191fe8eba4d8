package rerank

import (
	"context"
	"sync"
)

// A WindowMemo holds what several stages scoring one window would each
// compute alike, such as the query terms' counts in every candidate read
// off the same payloads, so that it is computed once per window rather
// than once per stage. A search gives one to the window's stages through
// their context (WindowMemoOf), from the choice of the documents to load
// (DocReader) to the stages' scores; a stage scoring without one
// computes as usual.
type WindowMemo struct {
	mu sync.Mutex
	m  map[any]*memoEntry
}

type memoEntry struct {
	once sync.Once
	v    any
	err  error
}

type windowMemoKey struct{}

// withWindowMemo returns ctx carrying a new, empty WindowMemo.
func withWindowMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, windowMemoKey{}, &WindowMemo{m: map[any]*memoEntry{}})
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
	m.mu.Lock()
	e, ok := m.m[key]
	if !ok {
		e = &memoEntry{}
		m.m[key] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.v, e.err = f() })
	return e.v, e.err
}
