package rerank

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSpecialFilesRefused: a pipeline naming a FIFO, a device or a file
// of zeros gigabytes long, as its fusion model, as a file listed under
// sha256, or as the pipeline file itself, fails to load at once with an
// error naming the file. The FIFO used to block forever (a server reload
// held its write lock meanwhile), /dev/zero to be read for 47 s.
func TestSpecialFilesRefused(t *testing.T) {
	dir := t.TempDir()
	paths := map[string]string{}
	if runtime.GOOS != "windows" {
		fifo := filepath.Join(dir, "fifo.model")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		paths["FIFO"] = fifo
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		paths["device"] = "/dev/zero"
	}
	sparse := filepath.Join(dir, "sparse.model")
	if f, err := os.Create(sparse); err == nil {
		if f.Truncate(3<<30) == nil {
			paths["sparse 3 GiB"] = sparse
		}
		f.Close()
	}
	within := func(t *testing.T, f func()) {
		t.Helper()
		done := make(chan struct{})
		start := time.Now()
		go func() { f(); close(done) }()
		select {
		case <-done:
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("still reading after 5 s")
		}
	}
	for what, p := range paths {
		t.Run(what, func(t *testing.T) {
			const zeros = "0000000000000000000000000000000000000000000000000000000000000000"
			for _, cfg := range []*Config{
				{Stages: []StageSpec{{Type: "test_const"}}, Fusion: FusionSpec{Model: p}},
				{Stages: []StageSpec{{Type: "test_const"}}, Checksums: map[string]string{p: zeros}},
			} {
				within(t, func() {
					_, err := cfg.Build(Env{Dir: dir})
					if err == nil || !strings.Contains(err.Error(), p) {
						t.Errorf("Build: err = %v, want one naming %s", err, p)
					}
				})
			}
			within(t, func() {
				if _, err := ReadConfig(p); err == nil || !strings.Contains(err.Error(), p) {
					t.Errorf("ReadConfig: err = %v, want one naming %s", err, p)
				}
			})
		})
	}
}
