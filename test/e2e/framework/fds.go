package framework

import (
	"os"
	"strconv"
	"syscall"
)

// closeInheritedOnExec marks the descriptors this process inherited beyond
// standard input, output and error close-on-exec. The control plane's
// servers outlive a test run that panics (its teardown does not run); had
// they inherited a descriptor such as the lock of `flock LOCK go test`,
// the next run waiting on that lock would wait for them forever. Where
// /proc/self/fd cannot be read, nothing is done.
func closeInheritedOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
