//go:build unix

package mvcc

import (
	"syscall"
	"time"
)

// cpuNow returns the CPU time the process has used (user + system). The
// benchmarks report throughput per CPU second too, because on a shared,
// loaded machine wall-clock ns/op mostly measures the other processes.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
