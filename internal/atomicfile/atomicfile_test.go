package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		old     string // "" for no previous file
		fn      func(io.Writer) error
		want    string
		wantErr bool
	}{
		{"new file", "", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, "new", false},
		{"replaces", "old", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, "new", false},
		{"failure keeps the old file", "old", func(w io.Writer) error { io.WriteString(w, "half"); return boom }, "old", true},
		{"failure writes nothing new", "", func(w io.Writer) error { return boom }, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.yaml")
			if tc.old != "" {
				if err := os.WriteFile(path, []byte(tc.old), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := Write(path, tc.fn)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			got, rerr := os.ReadFile(path)
			if tc.want == "" {
				if !os.IsNotExist(rerr) {
					t.Errorf("file exists after a failed first write: %q, %v", got, rerr)
				}
			} else if string(got) != tc.want {
				t.Errorf("content %q, want %q", got, tc.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 1 || (tc.want == "" && len(entries) > 0) {
				t.Errorf("temporary files left: %v", entries)
			}
			if fi, err := os.Stat(path); err == nil && !tc.wantErr && fi.Mode().Perm() != 0o644 {
				t.Errorf("mode %v, want 0644", fi.Mode().Perm())
			}
		})
	}
}

// TestWriteErrorsNamePath: a failure names the file asked for, not the
// temporary file beside it.
func TestWriteErrorsNamePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "run.trec")
	err := Write(path, func(io.Writer) error { return nil })
	if err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), ".tmp-") {
		t.Fatalf("err = %v, want one naming %s and no temporary file", err, path)
	}
}
