//go:build !windows

package cmd

import (
	"fmt"
	"os"
	"syscall"
)

// execOffline replaces this process with path, given args (args[0]
// becomes path).
func execOffline(path string, args []string) error {
	argv := append([]string{path}, args[1:]...)
	err := syscall.Exec(path, argv, os.Environ())
	return fmt.Errorf("starting %s: %w", path, err)
}
