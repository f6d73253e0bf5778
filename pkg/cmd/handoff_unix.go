//go:build !windows

package cmd

import (
	"fmt"

	"github.com/kubectl-rv/kubectl-rv/pkg/handoff"
)

// execOther replaces this process with path, given args (args[0]
// becomes path).
func execOther(path string, args []string) error {
	return fmt.Errorf("starting %s: %w", path, handoff.Exec(path, args))
}
