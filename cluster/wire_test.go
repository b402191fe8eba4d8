package cluster

import (
	"context"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
)

// TestEpochMovesWithWrites: an index's epoch stays while nothing is
// written, and moves with a write.
func TestEpochMovesWithWrites(t *testing.T) {
	whole, _, _ := demoIndexes(t, 1)
	e := Epoch(whole)
	if e2 := Epoch(whole); e2 != e {
		t.Fatalf("epoch moved without a write: %s, %s", e, e2)
	}
	if err := whole.Add(context.Background(), []dataset.Doc{{ID: "new", Text: "camel racing"}}, []index.PayloadEncoder{index.TermsEncoder{}}, nil); err != nil {
		t.Fatal(err)
	}
	if e2 := Epoch(whole); e2 == e {
		t.Fatalf("epoch %s stayed after a write", e)
	}
}
