package deepmatchexp

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/models/deepmatch"
)

func TestCrossValidateReport(t *testing.T) {
	ds, err := dataset.Load("../../../../testdata/deepmatch/semeval-a")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := deepmatch.FromDataset(ds)
	if err != nil {
		t.Fatal(err)
	}
	var cfg Config
	for _, m := range []string{deepmatch.MethodDeepMatch, deepmatch.MethodSiamese} {
		c := deepmatch.DefaultConfig(m)
		c.Resolutions, c.LDAIterations, c.PatchWords, c.Epochs, c.MinDF, c.Hidden, c.Dim = []int{3, 6}, 5, 15, 2, 1, 4, 4
		cfg.Methods = append(cfg.Methods, c)
	}
	o, err := CrossValidate(context.Background(), qs, 2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Test) != len(qs) {
		t.Fatalf("%d queries scored, want every one of %d once", len(o.Test), len(qs))
	}
	seen := map[string]bool{}
	for _, q := range o.Test {
		if seen[q.ID] {
			t.Fatalf("query %s scored twice", q.ID)
		}
		seen[q.ID] = true
	}
	for n, s := range o.Scores {
		if len(s) != len(qs) {
			t.Fatalf("%s: %d score lists", n, len(s))
		}
	}
	// The IR order must reproduce the first-stage ranking's MAP.
	want, err := eval.Evaluate(ds.Qrels, *ds.Candidates, eval.MustParseMetrics("map@10"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := evaluate(o.Test, o.Scores[IR], "map@10")
	if err != nil {
		t.Fatal(err)
	}
	if d := got.Mean[0] - want.Mean[0]; d > 1e-12 || d < -1e-12 {
		t.Fatalf("IR order MAP %g, first stage %g", got.Mean[0], want.Mean[0])
	}
	for _, m := range []string{deepmatch.MethodDeepMatch, deepmatch.MethodSiamese} {
		if n := len(o.Params[m]); n != 2 {
			t.Errorf("%s: %d weight counts, want one per fold", m, n)
		}
		if w := o.Weights(m); !strings.Contains(w, "2 folds") {
			t.Errorf("%s: Weights = %q, want it to cover both folds", m, w)
		}
	}
	o.AddFused()
	var buf bytes.Buffer
	if err := o.Report(&buf); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"deepmatch vs siamese", "deepmatch + IR vs siamese + IR", "ndcg@6"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, buf.String())
		}
	}
	if _, err := CrossValidate(context.Background(), qs, 1, cfg); err == nil {
		t.Fatal("one fold: no error")
	}
}

func TestPools(t *testing.T) {
	qs := []deepmatch.Query{
		{ID: "a", Text: "a", Cands: []deepmatch.Cand{{ID: "a1"}, {ID: "a2", Relevant: true}}},
		{ID: "b", Text: "b", Cands: []deepmatch.Cand{{ID: "b1"}}},
		{ID: "c", Text: "c", Cands: []deepmatch.Cand{{ID: "c1", Relevant: true}}},
	}
	ps := pools(qs, 1)
	if len(ps) != 2 {
		t.Fatalf("%d pools, want 2 (query b has no relevant candidate)", len(ps))
	}
	for _, p := range ps {
		relevant := 0
		for _, c := range p.Cands {
			switch {
			case c.Relevant:
				relevant++
			case strings.HasPrefix(c.ID, p.ID):
				t.Fatalf("pool %s draws its own %s", p.ID, c.ID)
			}
		}
		if len(p.Cands) != 6 || relevant != 1 {
			t.Fatalf("pool %s: %+v", p.ID, p.Cands)
		}
	}
	// The relevant candidate's place varies, or it would win every tie.
	var many []deepmatch.Query
	for i := range 20 {
		many = append(many, deepmatch.Query{ID: fmt.Sprint(i), Cands: []deepmatch.Cand{{ID: fmt.Sprint(i, "+"), Relevant: true}}})
	}
	places := map[int]bool{}
	for _, p := range pools(many, 1) {
		places[slices.IndexFunc(p.Cands, func(c deepmatch.Cand) bool { return c.Relevant })] = true
	}
	if len(places) < 3 {
		t.Errorf("relevant candidates at places %v over 20 pools", places)
	}
}

// TestRepeatedMethod checks that a method named twice is refused before any
// training: its scores were appended twice to one list and AddFused
// panicked (index out of range) after every model had trained.
func TestRepeatedMethod(t *testing.T) {
	qs := []deepmatch.Query{
		{ID: "a", Text: "a b", Cands: []deepmatch.Cand{{ID: "a1", Text: "a"}, {ID: "a2", Text: "b", Relevant: true}}},
		{ID: "b", Text: "b c", Cands: []deepmatch.Cand{{ID: "b1", Text: "c", Relevant: true}, {ID: "b2", Text: "d"}}},
	}
	c := deepmatch.DefaultConfig(deepmatch.MethodBilinear)
	cfg := Config{Methods: []deepmatch.Config{c, c}}
	for name, run := range map[string]func() error{
		"RunSplit":      func() error { _, err := RunSplit(context.Background(), qs, qs, Texts(qs), cfg); return err },
		"CrossValidate": func() error { _, err := CrossValidate(context.Background(), qs, 2, cfg); return err },
	} {
		if err := run(); err == nil || !strings.Contains(err.Error(), `"bilinear" twice`) {
			t.Errorf("%s: err = %v, want one naming bilinear twice", name, err)
		}
	}
}

func TestWeights(t *testing.T) {
	o := &Outcome{Params: map[string][]int{"one": {120}, "same": {7, 7, 7}, "range": {130, 110, 125}}}
	for _, c := range []struct{ name, want string }{
		{"one", "120 weights"},
		{"same", "7 weights in each of 3 folds"},
		{"range", "110 to 130 weights over 3 folds"},
		{"absent", "no weights recorded"},
	} {
		if got := o.Weights(c.name); got != c.want {
			t.Errorf("Weights(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
