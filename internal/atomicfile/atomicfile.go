// Package atomicfile writes files so that a reader sees the old content or
// the new, never a part: models, pipeline files and runs are read by
// servers that reload them and by later commands, and a crash or a full
// disk mid-write must not leave a truncated file behind.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write calls fn with a buffered writer to a temporary file beside path and
// renames it to path once fn and every write have succeeded. On error path
// is untouched and the temporary file removed. The file gets mode 0644.
func Write(path string, fn func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return named(path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // fails harmlessly after the rename
	bw := bufio.NewWriter(f)
	if err := fn(bw); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err) // fn's own error, maybe about another file
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return named(path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return named(path, err)
	}
	// On disk before the rename, or a crash soon after could leave the
	// new name pointing at an empty file in place of the old one.
	if err := f.Sync(); err != nil {
		f.Close()
		return named(path, err)
	}
	if err := f.Close(); err != nil {
		return named(path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return named(path, err)
	}
	return nil
}

// named reports err under path: the temporary file's name, which
// os.PathError and os.LinkError carry, means nothing to the user.
func named(path string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return fmt.Errorf("%s: %w", path, err)
}
