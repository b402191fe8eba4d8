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
