package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/semrank/semrank/index"
)

// indexTarget is where "semrank index" writes. A new index (a path that
// does not exist, or an empty folder) is built in a staging folder beside
// it and renamed into place once it is whole and closed, so that the path
// never holds a partial index: not after a failure or Ctrl-C (the staging
// folder is removed), not after SIGKILL (the staging folder is left, named
// for the path, and the next run points it out), and not when two runs
// create the same path at once (the second rename fails, and the first
// run's index stays as it is). An existing index is added to in place.
type indexTarget struct {
	path    string      // as the user gave it
	final   string      // where the new index goes: path, resolved through links
	staging string      // "" when adding to an existing index
	mode    os.FileMode // the empty folder's at final, which the index keeps; 0 for a new path
}

// stagingInfix names staging folders: ".NAME" + stagingInfix + random.
const stagingInfix = ".indexing-"

// stagingName is the start of the names of final's staging folders.
func stagingName(final string) string { return "." + filepath.Base(final) + stagingInfix }

// openForIndex opens the index at path for "semrank index", or creates a
// new one in a staging folder when path does not exist or is an empty
// folder (which keeps its mode). The caller ends with publish, after
// closing the index, or discard.
func openForIndex(path string) (*index.Index, *indexTarget, error) {
	t := &indexTarget{path: path}
	entries, err := os.ReadDir(path)
	switch {
	case err == nil && len(entries) == 0: // an empty folder, or a link to one: replaced where it is
		if t.final, err = filepath.EvalSymlinks(path); err != nil {
			return nil, nil, err
		}
		if st, err := os.Stat(t.final); err == nil {
			t.mode = st.Mode().Perm()
		}
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(path); lerr == nil {
			return nil, nil, fmt.Errorf("--index %s is a link to nothing (%v): remove it, or give the path it should point to", path, err)
		}
		t.final = filepath.Clean(path)
		// Bleve made missing parent folders; the staging folder needs them.
		if err := os.MkdirAll(filepath.Dir(t.final), 0o755); err != nil {
			return nil, nil, err
		}
	default: // an existing index, or a file or folder that Open explains
		idx, err := index.Open(path)
		if err != nil {
			return nil, nil, err
		}
		return idx, t, nil
	}
	if t.staging, err = os.MkdirTemp(filepath.Dir(t.final), stagingName(t.final)+"*"); err != nil {
		return nil, nil, fmt.Errorf("a staging folder beside %s: %w", path, err)
	}
	idx, err := index.Create(t.staging)
	if err != nil {
		os.RemoveAll(t.staging)
		return nil, nil, err
	}
	return idx, t, nil
}

// publish moves a new index into place; the caller has closed it. An
// empty folder there is removed first (os.Rename replaces no folder);
// neither step takes away a folder with anything in it, so an index
// another run published at the path meanwhile is kept, and this one
// removed.
func (t *indexTarget) publish() error {
	if t.staging == "" {
		return nil
	}
	if err := os.Remove(t.final); err != nil && !errors.Is(err, fs.ErrNotExist) && !isFilled(t.final) {
		os.RemoveAll(t.staging)
		return fmt.Errorf("replacing the empty folder %s with the new index: %w", t.path, err)
	}
	if err := os.Rename(t.staging, t.final); err != nil {
		os.RemoveAll(t.staging)
		if isFilled(t.final) {
			return fmt.Errorf("%s was filled by another process while this run indexed (another semrank index?); it is left as it is, and this run's index was discarded", t.path)
		}
		return fmt.Errorf("moving the new index into place at %s: %w", t.path, err)
	}
	if t.mode != 0 {
		// The staging folder was made 0700: the user's folder keeps the
		// mode it had.
		if err := os.Chmod(t.final, t.mode); err != nil {
			return fmt.Errorf("the new index at %s: %w", t.path, err)
		}
	}
	return nil
}

// isFilled reports whether path is a folder with something in it.
func isFilled(path string) bool {
	entries, err := os.ReadDir(path)
	return err == nil && len(entries) > 0
}

// discard undoes a failed run: the staging folder of a new index is
// removed; an existing index is left as it is.
func (t *indexTarget) discard() {
	if t.staging != "" {
		os.RemoveAll(t.staging)
	}
}

// leftStaging lists staging folders of path that an earlier run left
// (killed before it could remove its own), or that a run still going
// has: they cannot be told apart, so they are pointed out, not removed.
func leftStaging(path string) []string {
	final := filepath.Clean(path)
	if r, err := filepath.EvalSymlinks(path); err == nil {
		final = r
	}
	prefix := stagingName(final)
	entries, _ := os.ReadDir(filepath.Dir(final))
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			out = append(out, filepath.Join(filepath.Dir(final), e.Name()))
		}
	}
	return out
}
