//go:build windows

package dirlock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockRange returns the locked byte range: one byte far past the pid
// written at the start of the file. Windows locks are mandatory, and a
// lock over the pid would keep the process that finds the directory
// locked from reading it.
func lockRange() *windows.Overlapped {
	return &windows.Overlapped{OffsetHigh: 1} // 4 GiB
}

// lockFile locks f's lock byte without waiting.
func lockFile(f *os.File) error {
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, lockRange())
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errHeld
	}
	return err
}

func unlockFile(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, lockRange())
}

// noFollow is 0: this system's open has no flag to refuse symbolic links.
const noFollow = 0
