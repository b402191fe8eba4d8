package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/semrank/semrank/cluster"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/server"
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
		if mark, ok, err := cluster.ShardOfIndex(idx); err != nil || !ok || mark != fmt.Sprintf("%d/3", s) {
			t.Errorf("shard %d records %q (%v, %v)", s, mark, ok, err)
		}
		n, _ := idx.DocCount()
		total += int(n)
		idx.Close()
	}
	// An index of one shard takes no other shard's documents.
	if _, err := execute("index", "--data", data, "--index", filepath.Join(dir, "s0"), "--shard", "1/3"); err == nil || !strings.Contains(err.Error(), "holds shard 0/3, not 1/3") {
		t.Errorf("indexing shard 1/3 into shard 0/3's index: %v", err)
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

// TestBenchRemote: bench --remote checks that a coordinator over three
// shard servers answers the demo's queries as one index does, and times
// both.
func TestBenchRemote(t *testing.T) {
	whole, pipeline := demoIndex(t, "window: 30\nstages:\n  - type: tfidf\n  - type: bm25\n")
	var urls []string
	for s := range 3 {
		path := filepath.Join(t.TempDir(), "shard")
		if out, err := execute("index", "--data", "../../testdata/demo", "--index", path, "--shard", fmt.Sprintf("%d/3", s)); err != nil {
			t.Fatalf("index --shard: %v\n%s", err, out)
		}
		idx, err := index.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { idx.Close() })
		srv, err := server.New(server.Config{Index: idx, PipelinePath: pipeline, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		urls = append(urls, ts.URL)
	}
	reversed := []string{urls[2], urls[1], urls[0]}
	if _, err := cluster.NewCoordinator(t.Context(), reversed, cluster.Options{Timeout: time.Minute}); err == nil || !strings.Contains(err.Error(), "serves shard 2/3, but is listed as shard 0/3") {
		t.Errorf("shards out of order: %v", err)
	}
	out, err := execute("bench", "--index", whole, "--pipeline", pipeline, "--data", "../../testdata/demo", "--rounds", "1", "--queries", "10", "--remote", strings.Join(urls, ","))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"top 10 of 10 queries: the same ids, order and scores (to 1e-9)", "one index, reranked (window 30)", "3 shards + coordinator, reranked", "ratio of medians"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestServeRemoteRefuses: serve takes --index or --remote, not both nor
// neither, and a coordinator needs a shard that answers.
func TestServeRemoteRefuses(t *testing.T) {
	_, pipeline := demoIndex(t, "window: 10\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--pipeline", pipeline}, "give --index PATH"},
		{[]string{"serve", "--index", "x", "--remote", "http://127.0.0.1:1", "--pipeline", pipeline}, "give --index PATH"},
		{[]string{"serve", "--remote", "http://127.0.0.1:1", "--read-only", "--pipeline", pipeline}, "--read-only is for --index"},
		{[]string{"serve", "--remote", "ftp://x", "--pipeline", pipeline}, "want http://host:port"},
		{[]string{"serve", "--remote", "http://127.0.0.1:1,http://127.0.0.1:1", "--pipeline", pipeline}, "listed twice"},
		{[]string{"serve", "--remote", "http://127.0.0.1:1", "--shard-timeout", "0s", "--pipeline", pipeline}, "--shard-timeout 0s"},
		{[]string{"serve", "--remote", "http://127.0.0.1:1", "--pipeline", pipeline, "--addr", "127.0.0.1:0"}, "no shard answered"},
	} {
		if _, err := execute(tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err %v, want %q", tt.args, err, tt.want)
		}
	}
}

// TestDeployCommands: the semrank commands the deployment files run
// exist, with the flags they give.
func TestDeployCommands(t *testing.T) {
	var lines []string
	for _, f := range []string{"../../deploy/compose.yaml", "../../deploy/k8s/shards.yaml", "../../deploy/k8s/coordinators.yaml"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for {
			var doc any
			if err := dec.Decode(&doc); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			lines = append(lines, semrankCommands(doc)...)
		}
	}
	if len(lines) < 6 {
		t.Fatalf("found %d semrank commands in the deployment files: %q", len(lines), lines)
	}
	for _, l := range lines {
		args := strings.Fields(l)
		cmd, rest, err := rootCmd.Find(args)
		if err != nil || cmd == rootCmd {
			t.Errorf("%q: no such command (%v)", l, err)
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("%q: %v", l, err)
		}
		resetFlags(cmd)
	}
}

// semrankCommands returns the semrank command lines in a deployment
// document: container args starting with a command name, and the
// semrank invocations in shell commands.
func semrankCommands(doc any) []string {
	var out []string
	switch v := doc.(type) {
	case map[string]any:
		for k, x := range v {
			if list, ok := x.([]any); ok && (k == "args" || k == "command") && len(list) > 0 {
				if first, ok := list[0].(string); ok && (first == "serve" || first == "index") {
					var words []string
					for _, w := range list {
						words = append(words, fmt.Sprint(w))
					}
					out = append(out, strings.Join(words, " "))
					continue
				}
			}
			out = append(out, semrankCommands(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, semrankCommands(x)...)
		}
	case string:
		for _, part := range strings.Split(v, "semrank ")[1:] {
			part = strings.NewReplacer("$(POD_INDEX)", "0", "exec ", "").Replace(part)
			part, _, _ = strings.Cut(part, " &&")
			out = append(out, strings.TrimSpace(part))
		}
	}
	return out
}
