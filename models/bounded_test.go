package models

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// counting is an endless reader of one byte value that counts what it
// gives, standing for /dev/zero or a large file of padding.
type counting struct {
	n int64
	b byte
}

func (c *counting) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.b
	}
	c.n += int64(len(p))
	return len(p), nil
}

// TestReadBoundedByHeader: Read stops at what the header declares. Endless
// zeros are no bundle after their first bytes (Read used to take up to
// MaxBundleSize, 4 GiB, first), and a bundle followed by more bytes is
// refused after one more.
func TestReadBoundedByHeader(t *testing.T) {
	zeros := &counting{}
	if _, err := Read(zeros); !errors.Is(err, ErrNotBundle) || zeros.n > 1<<16 {
		t.Errorf("endless zeros: err = %v after %d bytes; want ErrNotBundle within 64 KiB", err, zeros.n)
	}
	var good bytes.Buffer
	if _, err := sample().WriteTo(&good); err != nil {
		t.Fatal(err)
	}
	tail := &counting{b: 'x'}
	if _, err := Read(io.MultiReader(bytes.NewReader(good.Bytes()), tail)); !errors.Is(err, ErrCorrupt) || tail.n > 1<<16 {
		t.Errorf("a bundle, then endless bytes: err = %v after %d more bytes; want ErrCorrupt within 64 KiB", err, tail.n)
	}
	if b, err := Read(bytes.NewReader(good.Bytes())); err != nil || b.Manifest.Method != "tweak" {
		t.Errorf("the bundle alone: %v", err)
	}
	// A manifest whose sections claim more than the file holds reads as
	// truncated, without allocating what they claim.
	raw := good.Bytes()
	if _, err := Read(bytes.NewReader(raw[:len(raw)-40])); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: err = %v, want ErrCorrupt", err)
	}
}

// TestLoadRefusesSpecialFiles: a model path naming a device, a FIFO or a
// directory is refused at once with an error naming it; the FIFO used to
// block forever, /dev/zero to be read for tens of seconds.
func TestLoadRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	paths := []string{dir}
	if runtime.GOOS != "windows" {
		fifo := filepath.Join(dir, "fifo.model")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, fifo)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		paths = append(paths, "/dev/zero")
	}
	for _, p := range paths {
		done := make(chan error, 1)
		go func() { _, err := Load(p, "", 0); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Load(%s): err = %v, want one naming it as not a regular file", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Load(%s) still reading after 5 s", p)
		}
	}
	// A sparse file of zeros, gigabytes long, is refused after its first
	// bytes.
	sparse := filepath.Join(dir, "sparse.model")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 30); err != nil {
		f.Close()
		t.Skipf("no sparse file: %v", err)
	}
	f.Close()
	start := time.Now()
	if _, err := Load(sparse, "", 0); !errors.Is(err, ErrNotBundle) || time.Since(start) > 2*time.Second {
		t.Errorf("sparse 3 GiB file: err = %v after %v; want ErrNotBundle at once", err, time.Since(start))
	}
}
