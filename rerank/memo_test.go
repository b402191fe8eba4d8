package rerank

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestWindowMemo(t *testing.T) {
	var calls atomic.Int32
	f := func(v int) func() (any, error) {
		return func() (any, error) {
			calls.Add(1)
			return v, nil
		}
	}
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		wantCalls int32
	}{
		{"one memo: once per key", withWindowMemo(context.Background()), 2},
		{"no memo: every call", context.Background(), 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls.Store(0)
			m := WindowMemoOf(tc.ctx)
			var wg sync.WaitGroup
			for i := range 16 {
				key := i % 2
				wg.Go(func() {
					v, err := m.Do(key, f(key))
					if err != nil || v.(int) != key {
						t.Errorf("Do(%d) = %v, %v", key, v, err)
					}
				})
			}
			wg.Wait()
			if got := calls.Load(); got != tc.wantCalls {
				t.Errorf("%d calls, want %d", got, tc.wantCalls)
			}
		})
	}
	// An error is the result for every caller of the key.
	m := WindowMemoOf(withWindowMemo(context.Background()))
	boom := errors.New("boom")
	for range 2 {
		if _, err := m.Do("k", func() (any, error) { return nil, boom }); !errors.Is(err, boom) {
			t.Errorf("err %v, want boom", err)
		}
	}
}
