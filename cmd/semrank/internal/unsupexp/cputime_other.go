//go:build !unix

package unsupexp

import "time"

// cpuTime is unavailable here; timings fall back to wall time only.
func cpuTime() time.Duration { return 0 }
