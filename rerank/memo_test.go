package rerank

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// TestWindowMemoWaits: stages' views of one memo (waitingOn) share its
// results, and each counts only the time it waited for a result another
// computed, not the time it computed one itself.
func TestWindowMemoWaits(t *testing.T) {
	ctx := withWindowMemo(context.Background())
	var waitA, waitB atomic.Int64
	a, b := WindowMemoOf(waitingOn(ctx, &waitA)), WindowMemoOf(waitingOn(ctx, &waitB))
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan any)
	go func() {
		v, _ := a.Do("k", func() (any, error) {
			close(started)
			<-release
			return "a's", nil
		})
		done <- v
	}()
	<-started
	go func() {
		v, _ := b.Do("k", func() (any, error) { return "b's", nil })
		done <- v
	}()
	time.Sleep(5 * time.Millisecond) // b waits on a's result meanwhile
	close(release)
	for range 2 {
		if v := <-done; v != "a's" {
			t.Errorf("result %v, want a's", v)
		}
	}
	if waitA.Load() != 0 || waitB.Load() <= 0 {
		t.Errorf("waited %v (computed) and %v (waited), want 0 and more", waitA.Load(), waitB.Load())
	}
}
