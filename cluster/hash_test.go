package cluster

import (
	"fmt"
	"testing"
)

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		i, n int
		ok   bool
	}{
		{"0/3", 0, 3, true}, {"2/3", 2, 3, true}, {"0/1", 0, 1, true},
		{"3/3", 0, 0, false}, {"-1/3", 0, 0, false}, {"1/0", 0, 0, false},
		{"1", 0, 0, false}, {"a/b", 0, 0, false}, {"0/1025", 0, 0, false}, {"", 0, 0, false},
	} {
		i, n, err := ParseShard(c.in)
		if (err == nil) != c.ok || i != c.i || n != c.n {
			t.Errorf("ParseShard(%q) = %d, %d, %v", c.in, i, n, err)
		}
	}
}

// TestOf pins the hash: documents of an index sharded by one release must
// be found on the same shards by the next.
func TestOf(t *testing.T) {
	want := map[string]int{"1": 1, "2": 1, "3": 0, "doc-17": 1, "": 2}
	for id, s := range want {
		if got := Of(id, 3); got != s {
			t.Errorf("Of(%q, 3) = %d, want %d", id, got, s)
		}
	}
	counts := make([]int, 3)
	for i := range 3000 {
		counts[Of(fmt.Sprint(i), 3)]++
	}
	for s, c := range counts {
		if c < 900 || c > 1100 {
			t.Errorf("shard %d holds %d of 3000 ids", s, c)
		}
	}
}

// FuzzParseShard: ParseShard accepts exactly the I/N with 0 ≤ I < N ≤
// MaxShards it formats back to the same numbers, and never panics.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/3", "2/3", "3/3", "-1/2", "1/0", "a/b", "", "/", "1//2", "01/3", "0/1024", "0/1025", "9999999999999999999/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		i, n, err := ParseShard(s)
		if err != nil {
			return
		}
		if i < 0 || n < 1 || i >= n || n > MaxShards {
			t.Fatalf("%q: accepted as %d/%d", s, i, n)
		}
		if j, m, err := ParseShard(fmt.Sprintf("%d/%d", i, n)); err != nil || j != i || m != n {
			t.Fatalf("%q: %d/%d does not parse back: %d/%d, %v", s, i, n, j, m, err)
		}
	})
}
