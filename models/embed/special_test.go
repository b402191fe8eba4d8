package embed

import (
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadFileRefusesFIFO: word vectors named by a FIFO nobody writes to
// are refused at once, in every format; the open used to block forever.
func TestLoadFileRefusesFIFO(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	fifo := filepath.Join(t.TempDir(), "vectors.txt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{FormatAuto, FormatBundle, FormatGloVe, FormatWord2VecBin} {
		done := make(chan error, 1)
		go func() { _, err := LoadFile(fifo, f); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: err = %v, want one naming %s as not a regular file", f, err, fifo)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still opening after 5 s", f)
		}
	}
}
