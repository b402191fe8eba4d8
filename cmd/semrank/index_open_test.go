package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
)

// TestOpenForIndexRefusesAnIndexMadeMeanwhile: a path that was new when
// "semrank index" looked, but holds another run's index by the time it
// opens, is refused rather than opened: the run's discard, made for a new
// path, would otherwise remove that index when the run fails.
func TestOpenForIndexRefusesAnIndexMadeMeanwhile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idx")
	defer func() { testHookOpenForIndex = nil }()
	testHookOpenForIndex = func() {
		other, err := index.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Add(context.Background(), []eval.Doc{{ID: "d1", Text: "bank"}}, nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := other.Close(); err != nil {
			t.Fatal(err)
		}
	}
	idx, discard, err := openForIndex(path)
	if err == nil {
		idx.Close()
		discard() // as a failed run would
		t.Error("openForIndex opened an index made after it looked at the path")
	}
	testHookOpenForIndex = nil
	other, err := index.Open(path)
	if err != nil {
		t.Fatalf("the other run's index: %v", err)
	}
	defer other.Close()
	if n, err := other.DocCount(); err != nil || n != 1 {
		t.Errorf("the other run's index holds %d documents (%v), want 1", n, err)
	}
}
