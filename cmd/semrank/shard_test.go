package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/cluster"
	"github.com/semrank/semrank/index"
)

// TestIndexShard: the shards of --shard I/N hold every document once, each
// on the shard its id hashes to; a malformed --shard is refused.
func TestIndexShard(t *testing.T) {
	dir := t.TempDir()
	var corpus strings.Builder
	for i := range 30 {
		fmt.Fprintf(&corpus, `{"_id":"d%d","text":"bank fees document %d"}`+"\n", i, i)
	}
	data := writeDataDir(t, filepath.Join(dir, "data"), map[string]string{"corpus.jsonl": corpus.String()})
	total := 0
	for s := range 3 {
		path := filepath.Join(dir, fmt.Sprint("s", s))
		if out, err := execute("index", "--data", data, "--index", path, "--shard", fmt.Sprintf("%d/3", s)); err != nil {
			t.Fatalf("index --shard %d/3: %v\n%s", s, err, out)
		}
		idx, err := index.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			id := fmt.Sprint("d", i)
			_, ok, err := idx.Doc(id)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (cluster.Of(id, 3) == s) {
				t.Errorf("shard %d holds %s: %v; it hashes to shard %d", s, id, ok, cluster.Of(id, 3))
			}
		}
		n, _ := idx.DocCount()
		total += int(n)
		idx.Close()
	}
	if total != 30 {
		t.Errorf("the shards hold %d documents, want 30", total)
	}
	for _, bad := range []string{"3/3", "1", "x/2"} {
		if _, err := execute("index", "--data", data, "--index", filepath.Join(dir, "bad"), "--shard", bad); err == nil || !strings.Contains(err.Error(), "want I/N") {
			t.Errorf("--shard %s: err = %v", bad, err)
		}
	}
}
