//go:build !unix

package cpuclock

import "time"

// Process returns 0: the process's CPU time is not read on this system,
// and timings fall back to wall time alone.
func Process() time.Duration { return 0 }
