package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
)

// TestKilledIndexRun SIGKILLs real "semrank index" processes at random
// moments: one building a new index, and several rewriting every
// document of an existing one (new text, so new term-count payloads)
// over several Bleve batches. After each kill the index must open, hold
// every document, in its old text or its new, and hold for each either
// no terms payload or the one its text gives, never its other text's.
// The new-index run must leave nothing at its path but a whole index.
func TestKilledIndexRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the semrank binary")
	}
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build semrank with")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "semrank")
	if out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// A real slice, the TWEAK test corpus, repeated under other ids to
	// fill several batches of index.BatchSize.
	seed, err := dataset.LoadCorpus("../../testdata/tweak")
	if err != nil {
		t.Fatal(err)
	}
	var docs []dataset.Doc
	for i := 0; len(docs) < 2*index.BatchSize+index.BatchSize/2; i++ {
		for _, d := range seed {
			d.ID = fmt.Sprintf("%s-%d", d.ID, i)
			docs = append(docs, d)
		}
	}
	revised := make([]dataset.Doc, len(docs))
	for i, d := range docs {
		d.Text = "revised " + strings.ToUpper(d.Text) + " amended"
		revised[i] = d
	}
	oldData := writeCorpus(t, filepath.Join(dir, "old"), docs)
	newData := writeCorpus(t, filepath.Join(dir, "new"), revised)
	run := func(data, idx string, kill time.Duration) (killed bool) {
		t.Helper()
		c := exec.Command(bin, "index", "--data", data, "--index", idx)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		if kill > 0 {
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("index: %v\n%s", err, out.String())
				}
				return false
			case <-time.After(kill):
				_ = c.Process.Signal(syscall.SIGKILL)
			}
		}
		err := <-done
		if kill == 0 && err != nil {
			t.Fatalf("index: %v\n%s", err, out.String())
		}
		return err != nil
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 25))

	// A new index, killed: its path holds nothing, or a whole index.
	fresh := filepath.Join(dir, "fresh")
	start := time.Now()
	run(oldData, fresh, 0)
	full := time.Since(start)
	os.RemoveAll(fresh)
	if killed := run(oldData, fresh, time.Duration(rng.Int64N(int64(full)))+time.Millisecond); killed {
		if _, err := os.Stat(fresh); err == nil {
			checkKilled(t, fresh, docs, revised)
		}
	}

	// An existing index rewritten in place, killed again and again.
	path := filepath.Join(dir, "idx")
	run(oldData, path, 0)
	kills := 0
	for round := 0; round < 3; round++ {
		data := newData
		if round%2 == 1 {
			data = oldData
		}
		if run(data, path, time.Duration(rng.Int64N(int64(full)))+time.Millisecond) {
			kills++
		}
		checkKilled(t, path, docs, revised)
	}
	t.Logf("%d of 3 rewrites killed (a full run takes %v)", kills, full)
}

// checkKilled opens the index at path, as a next run would, and checks
// that it holds every document of docs, in the text of docs or of
// revised, each with no terms payload or the one of its text.
func checkKilled(t *testing.T, path string, docs, revised []dataset.Doc) {
	t.Helper()
	idx, err := index.Open(path)
	if err != nil {
		t.Fatalf("the index a killed run left does not open: %v", err)
	}
	defer idx.Close()
	if n, err := idx.DocCount(); err != nil || n != uint64(len(docs)) {
		t.Fatalf("the index holds %d documents (%v), want %d", n, err, len(docs))
	}
	with := 0
	for i, want := range docs {
		d, ok, err := idx.Doc(want.ID)
		if err != nil || !ok {
			t.Fatalf("document %s: %v, %v", want.ID, ok, err)
		}
		if d.Text != want.Text && d.Text != revised[i].Text {
			t.Fatalf("document %s holds text of neither run: %.60q", want.ID, d.Text)
		}
		p, has, err := idx.Payload(index.TermsPayload, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !has {
			continue
		}
		with++
		enc, _ := index.TermsEncoder{}.EncodePayload(d)
		if !bytes.Equal(p, enc) {
			t.Fatalf("document %s: its terms payload is not that of its text (stale payload of the other run)", want.ID)
		}
	}
	if with == 0 && len(idx.PayloadNames()) > 0 {
		t.Errorf("no document holds a payload, yet the index names %v", idx.PayloadNames())
	}
}

// writeCorpus writes docs as the corpus.jsonl of a BEIR folder at dir.
func writeCorpus(t *testing.T, dir string, docs []dataset.Doc) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, d := range docs {
		line, err := json.Marshal(map[string]any{"_id": d.ID, "title": d.Title, "text": d.Text})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, dataset.CorpusFile), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
