package recipe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/semrank/semrank/internal/dirlock"
)

// Output directories.
//
// A recipe run locks its output directory for the whole run, and each
// directory under it where it fits a pipeline (SemEval's train/, BEIR's
// fold directories) while it writes there, so that a second run on the
// same directory fails at once rather than interleaving its files with
// the first's. The lock is an OS lock (internal/dirlock) on the file
// .semrank.lock in the directory: a killed run leaves none behind. It
// covers one directory, not the tree under it.
//
// Whatever a run stages inside a directory is named .fit-*. Holding the
// lock, a run is the only one in the directory, so any .fit-* directory
// it finds there was left by a run that was killed (SIGKILL, a second
// Ctrl-C) and is removed. That holds where the OS lock reaches every
// process writing the directory: on a network file system whose locks
// are local to each host (NFS mounted nolock or local_lock), two hosts'
// runs on one directory do not see each other's locks; do not share an
// output directory across hosts there.

// stagingPrefix starts the names of the staging directories of runs in a
// directory, and stagingPattern matches them.
const (
	stagingPrefix  = ".fit-"
	stagingPattern = stagingPrefix + "*"
)

// under reports whether path is dir or lies below it, both made absolute
// (neither resolved through symbolic links).
func under(dir, path string) bool {
	d, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	p, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// lockOut locks dir for a run and removes the staging directories a
// killed run left in it, saying so through logf. The caller releases the
// lock when the run ends.
func lockOut(dir string, logf func(string, ...any)) (*dirlock.Lock, error) {
	l, err := dirlock.Acquire(dir)
	if err != nil {
		var held *dirlock.HeldError
		if errors.As(err, &held) {
			by := ""
			if held.PID > 0 {
				by = fmt.Sprintf(" (process %d)", held.PID)
			}
			return nil, fmt.Errorf("recipe: another recipe%s is writing %s; wait for it to finish or choose another output folder", by, dir)
		}
		return nil, fmt.Errorf("recipe: %w", err)
	}
	if err := sweep(dir, logf); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// sweep removes the staging directories in dir; see lockOut. It lists dir
// rather than globbing, so a folder name with glob characters ("out[1]",
// "exp*") can match nothing but its own entries.
func sweep(dir string, logf func(string, ...any)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var removed []string
	for _, e := range entries {
		// DirEntry does not follow symbolic links: a link is no
		// staging directory.
		if !e.IsDir() || !strings.HasPrefix(e.Name(), stagingPrefix) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("recipe: removing the staging directory of an interrupted run: %w", err)
		}
		removed = append(removed, e.Name())
	}
	if len(removed) > 0 {
		logf("removed from %s what an interrupted run left: %s", dir, strings.Join(removed, ", "))
	}
	return nil
}

// writeDir builds a directory with fill and moves it to dst, replacing
// the directory there: fill writes into a staging directory beside dst,
// so a fill that fails or a run that is killed meanwhile leaves dst as it
// was. A rename cannot replace a non-empty directory, so the old dst is
// first renamed into the staging directory, then the new one into place:
// a run killed between the two renames leaves no dst (both are in the
// staging directory, for the next run's sweep).
func writeDir(dst string, fill func(dir string) error) error {
	staging, err := os.MkdirTemp(filepath.Dir(dst), stagingPattern)
	if err != nil {
		return err
	}
	keepStaging := false
	defer func() {
		if !keepStaging {
			os.RemoveAll(staging)
		}
	}()
	next, old := filepath.Join(staging, "new"), filepath.Join(staging, "old")
	if err := os.Mkdir(next, 0o755); err != nil {
		return err
	}
	if err := fill(next); err != nil {
		return err
	}
	moved := true
	if err := os.Rename(dst, old); errors.Is(err, fs.ErrNotExist) {
		moved = false
	} else if err != nil {
		return fmt.Errorf("recipe: replacing %s: %w", dst, linkErr(err))
	}
	if err := os.Rename(next, dst); err != nil {
		if !moved {
			return fmt.Errorf("recipe: replacing %s: %w", dst, linkErr(err))
		}
		if rerr := os.Rename(old, dst); rerr != nil {
			// Keep the old directory rather than remove it with
			// the staging directory, and say where it is.
			keep := dst + ".old"
			if kerr := os.Rename(old, keep); kerr == nil {
				return fmt.Errorf("recipe: replacing %s: %w; putting the old one back failed too (%w): it is in %s", dst, linkErr(err), linkErr(rerr), keep)
			}
			keepStaging = true
			return fmt.Errorf("recipe: replacing %s: %w; putting the old one back failed too (%w): it is in %s; move it back by hand before the next run, which removes that folder", dst, linkErr(err), linkErr(rerr), old)
		}
		return fmt.Errorf("recipe: replacing %s: %w", dst, linkErr(err))
	}
	return nil
}

// linkErr returns a failed rename's cause: the paths of an os.LinkError
// are staging paths, which mean nothing to the user.
func linkErr(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
