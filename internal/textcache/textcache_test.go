package textcache

import (
	"strconv"
	"sync"
	"testing"
)

// TestCache computes each text once while it stays in the two
// generations, and again once it has aged out of both; concurrent gets
// agree.
func TestCache(t *testing.T) {
	calls := map[string]int{}
	var mu sync.Mutex
	c := New(func(s string) int {
		mu.Lock()
		calls[s]++
		mu.Unlock()
		return len(s)
	})
	for range 3 {
		if got := c.Get("visa renewal"); got != 12 {
			t.Fatalf("Get = %d, want 12", got)
		}
	}
	if calls["visa renewal"] != 1 {
		t.Errorf("computed %d times, want once", calls["visa renewal"])
	}
	// Two generations' worth of other texts push it out.
	for i := range 2 * Size {
		c.Get(strconv.Itoa(i))
	}
	c.Get("visa renewal")
	if calls["visa renewal"] != 2 {
		t.Errorf("after aging out: computed %d times, want twice", calls["visa renewal"])
	}
	// Put is a Get that computes nothing; Delete forgets, in either
	// generation.
	c.Put("bank", 4)
	if got := c.Get("bank"); got != 4 || calls["bank"] != 0 {
		t.Errorf("after Put: Get = %d, computed %d times, want 4 and none", got, calls["bank"])
	}
	c.Delete("bank")
	c.Delete("visa renewal")
	c.Get("bank")
	c.Get("visa renewal")
	if calls["bank"] != 1 || calls["visa renewal"] != 3 {
		t.Errorf("after Delete: computed %d and %d times, want once and thrice", calls["bank"], calls["visa renewal"])
	}
	c.Reset()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := c.Get("bank"); got != 4 {
				t.Errorf("Get = %d, want 4", got)
			}
		}()
	}
	wg.Wait()
}

// TestGetAll returns what Get returns for every text, in order, computes
// each text not cached once (a text twice in one call may be computed
// twice, never more) and caches what it computed; calls from several
// goroutines agree.
func TestGetAll(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	c := New(func(s string) int {
		mu.Lock()
		calls[s]++
		mu.Unlock()
		return len(s)
	})
	c.Get("cached")
	for _, tc := range []struct {
		name  string
		texts []string
		want  map[string]int // calls after the GetAll
	}{
		{"none", nil, map[string]int{"cached": 1}},
		{"all cached", []string{"cached", "cached"}, map[string]int{"cached": 1}},
		{"new and cached", []string{"visa", "cached", "bank account", "", "hospital"},
			map[string]int{"cached": 1, "visa": 1, "bank account": 1, "": 1, "hospital": 1}},
		{"now cached", []string{"hospital", "visa", ""},
			map[string]int{"cached": 1, "visa": 1, "bank account": 1, "": 1, "hospital": 1}},
	} {
		got := c.GetAll(tc.texts)
		if len(got) != len(tc.texts) {
			t.Fatalf("%s: %d values for %d texts", tc.name, len(got), len(tc.texts))
		}
		for i, s := range tc.texts {
			if got[i] != len(s) {
				t.Errorf("%s: value %d = %d, want %d", tc.name, i, got[i], len(s))
			}
		}
		mu.Lock()
		for s, n := range tc.want {
			if calls[s] != n {
				t.Errorf("%s: %q computed %d times, want %d", tc.name, s, calls[s], n)
			}
		}
		mu.Unlock()
	}
	texts := make([]string, 300)
	for i := range texts {
		texts[i] = strconv.Itoa(i % 150)
	}
	c.Reset()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i, v := range c.GetAll(texts) {
				if v != len(texts[i]) {
					t.Errorf("concurrent GetAll: value %d = %d, want %d", i, v, len(texts[i]))
				}
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, s := range texts {
		if n := calls[s]; n < 1 || n > 8 {
			t.Errorf("%q computed %d times by 4 calls holding it twice each, want 1 to 8", s, n)
		}
	}
}
