package index

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestFileModes: an index created in an empty folder keeps the folder's
// mode (Bleve made it anew, 0700, so 755 became 700), and the payload
// folder and logs get the modes of Bleve's store and segments (they were
// 0755 and 0644 beside Bleve's 0700 and 0600), as do the payload
// segments and logs a fold writes.
func TestFileModes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idx")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o751); err != nil {
		t.Fatal(err)
	}
	idx, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.Add(context.Background(), corpus, []PayloadEncoder{lenEncoder{"m1"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := idx.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	mode := func(p string) os.FileMode {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}
	if m := mode(path); m != 0o751 {
		t.Errorf("index folder mode %o, want the empty folder's 751", m)
	}
	store, payloads := filepath.Join(path, storeDir), filepath.Join(path, payloadDir)
	if ms, mp := mode(store), mode(payloads); ms != mp {
		t.Errorf("payload folder mode %o, Bleve's store %o", mp, ms)
	}
	segs, _ := filepath.Glob(filepath.Join(store, "*.zap"))
	logs, _ := filepath.Glob(filepath.Join(payloads, "*.log"))
	payloadSegs, _ := filepath.Glob(filepath.Join(payloads, "*"+segExt))
	if len(segs) == 0 || len(logs) == 0 || len(payloadSegs) == 0 {
		t.Fatalf("segments %v, logs %v, payload segments %v", segs, logs, payloadSegs)
	}
	for _, p := range append(logs, payloadSegs...) {
		if ms, mp := mode(segs[0]), mode(p); ms != mp {
			t.Errorf("%s mode %o, Bleve's segment %o", p, mp, ms)
		}
	}
}
