//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || windows)

package dirlock

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// lockFile refuses: without a lock, two writers of one directory would go
// unnoticed.
func lockFile(*os.File) error {
	return fmt.Errorf("no file locks on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func unlockFile(*os.File) error { return nil }

// noFollow is 0: this system's open has no flag to refuse symbolic links.
const noFollow = 0
