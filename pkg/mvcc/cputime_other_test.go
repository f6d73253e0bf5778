//go:build !unix

package mvcc

import "time"

var start = time.Now()

// cpuNow falls back to wall-clock time where getrusage is missing.
func cpuNow() time.Duration { return time.Since(start) }
