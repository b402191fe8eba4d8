// Package dirlock keeps two processes from writing one directory at once.
//
// A Lock is an exclusive OS lock (flock on Unix, LockFileEx on Windows)
// on the file Name inside the directory. Only processes that take the
// lock are kept out: it is advisory. The kernel releases it when its
// process ends, however it ends, so a killed process leaves no stale lock
// behind and nothing needs cleaning up (on a network file system the
// server may hold a crashed client's lock until its lease expires, and
// an NFS mount whose locks are local to each host does not keep other
// hosts out). The file itself is never removed:
// a process could lock the removed file while another creates a new one
// and locks that, and both would hold "the" lock.
package dirlock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Name is the lock file's name in a locked directory.
const Name = ".semrank.lock"

// A Lock is a held lock on a directory.
type Lock struct {
	f *os.File
}

// HeldError reports that another Lock holds the directory, in this
// process or another.
type HeldError struct {
	Dir string
	PID int // the holder's process id as it recorded it; 0 when unknown
}

func (e *HeldError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%s is locked by process %d", e.Dir, e.PID)
	}
	return fmt.Sprintf("%s is locked by another process", e.Dir)
}

// errHeld is what lockFile returns when another lock holds the file.
var errHeld = errors.New("held")

// errNoLocks is what lockFile wraps when the file system has no locks.
var errNoLocks = errors.New("this file system does not support file locks (an NFS mount without a lock daemon?); choose an output folder on a local disk")

// Acquire creates dir if needed and locks it without waiting. If another
// Lock holds dir, Acquire returns a *HeldError at once.
//
// The holder writes its process id into the lock file for the HeldError
// of a process that finds the directory locked. It is advisory: a
// process that finds the lock between another's locking and its writing
// the id reports no id.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, Name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow, 0o644)
	if errors.Is(err, fs.ErrPermission) {
		return nil, fmt.Errorf("opening the lock file %s: %w; whoever writes into %s must be able to write it (another user made it?)", path, err, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the lock file %s: %w (a symbolic link there is refused)", path, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errHeld) {
			return nil, &HeldError{Dir: dir, PID: readPID(path)}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	l := &Lock{f: f}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		l.Release()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return l, nil
}

// Release unlocks the directory. The lock file stays, emptied so that
// its id cannot be taken for the next holder's.
func (l *Lock) Release() error {
	err := l.f.Truncate(0)
	if uerr := unlockFile(l.f); err == nil {
		err = uerr
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readPID returns the process id in the lock file at path, 0 when it
// holds none.
func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
