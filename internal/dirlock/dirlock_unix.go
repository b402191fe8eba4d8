//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package dirlock

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// noFollow keeps Acquire from opening, and emptying, what a symbolic link
// planted at the lock file's name points to.
const noFollow = unix.O_NOFOLLOW

// lockFile takes an exclusive flock on f without waiting. A flock
// belongs to the open file, not to the process, so a second Acquire in
// the same process fails too.
func lockFile(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch err {
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK:
			return errHeld
		case unix.ENOLCK, unix.ENOTSUP:
			return fmt.Errorf("%w (%w)", errNoLocks, err)
		}
		return err
	}
}

func unlockFile(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}
