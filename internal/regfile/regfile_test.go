package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// specialFiles returns paths that are not regular files: a directory, a
// FIFO nobody writes to, and /dev/zero where the system has them.
func specialFiles(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{"directory": dir}
	if runtime.GOOS != "windows" {
		fifo := filepath.Join(dir, "fifo.model")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		out["FIFO"] = fifo
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		out["device"] = "/dev/zero"
	}
	return out
}

// within fails t when f takes longer than a few seconds: a FIFO used to
// block its open forever, and /dev/zero to be read for tens of seconds.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("still reading after 5 s")
	}
}

// TestNotRegular: Open and ReadFile refuse what is not a regular file at
// once, naming the path and what it is, and read a regular file.
func TestNotRegular(t *testing.T) {
	for what, path := range specialFiles(t) {
		t.Run(what, func(t *testing.T) {
			within(t, func() {
				f, _, err := Open(path)
				if err == nil {
					f.Close()
				}
				if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), path) {
					t.Errorf("Open: err = %v, want ErrNotRegular naming %s", err, path)
				}
				if _, err := ReadFile(path, 1<<20); !errors.Is(err, ErrNotRegular) {
					t.Errorf("ReadFile: err = %v, want ErrNotRegular", err)
				}
			})
		})
	}
	path := filepath.Join(t.TempDir(), "m")
	if err := os.WriteFile(path, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(path, 5); err != nil || string(b) != "12345" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if _, err := ReadFile(path, 4); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("ReadFile over its bound: err = %v, want one naming %s", err, path)
	}
	if link := path + ".link"; os.Symlink(path, link) == nil {
		if b, err := ReadFile(link, -1); err != nil || string(b) != "12345" {
			t.Errorf("ReadFile of a link = %q, %v", b, err)
		}
	}
}
