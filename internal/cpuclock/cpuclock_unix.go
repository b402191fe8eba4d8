//go:build unix

package cpuclock

import (
	"syscall"
	"time"
)

// Process returns the CPU time, user and system, that the process has
// used on every core; 0 where it cannot be read.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
