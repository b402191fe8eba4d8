package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalDefaultMetrics: without --metrics, eval reports SemEval's
// metrics for a run of at most 10 candidates a query and BEIR's for a
// retrieval run, where map@10 would read several times trec MAP; trec_eval's
// names are accepted.
func TestEvalDefaultMetrics(t *testing.T) {
	dir := t.TempDir()
	var qrels, short, long strings.Builder
	for d := range 30 {
		if d%3 == 0 {
			fmt.Fprintf(&qrels, "q1 0 d%d 1\n", d)
		}
		fmt.Fprintf(&long, "q1 Q0 d%d %d %d x\n", d, d+1, 100-d)
		if d < 10 {
			fmt.Fprintf(&short, "q1 Q0 d%d %d %d x\n", d, d+1, 100-d)
		}
	}
	path := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	q, s, l := path("qrels", qrels.String()), path("short.trec", short.String()), path("long.trec", long.String())
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"--run", s}, []string{"map@10", "mrr@10", "ndcg@10", "p@1", "auc"}, []string{"r@100"}},
		{[]string{"--run", l}, []string{"ndcg@10", "map", "r@100"}, []string{"map@10", "auc"}},
		{[]string{"--run", s, "--baseline", l}, []string{"ndcg@10", "r@100"}, []string{"map@10"}},
		{[]string{"--run", l, "--metrics", "ndcg_cut_10,recall_100,P_10,recip_rank,map@10"}, []string{"ndcg@10", "r@100", "p@10", "mrr", "map@10"}, nil},
	} {
		out, err := execute(append([]string{"eval", "--qrels", q}, tc.args...)...)
		if err != nil {
			t.Errorf("eval %v: %v\n%s", tc.args, err, out)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("eval %v lacks %s:\n%s", tc.args, w, out)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(out, n) {
				t.Errorf("eval %v reports %s:\n%s", tc.args, n, out)
			}
		}
	}
	if _, err := execute("eval", "--qrels", q, "--run", l, "--metrics", ""); err == nil || !strings.Contains(err.Error(), "no metrics") {
		t.Errorf("--metrics \"\": %v, want an error", err)
	}
}
