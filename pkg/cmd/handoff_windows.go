//go:build windows

package cmd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// execOther runs path with args (args[0] becomes path) on this
// process's standard streams and returns its exit code as a silent error
// (Windows cannot replace a process). Ctrl+C reaches both processes; this
// one waits for the other to end.
func execOther(path string, args []string) error {
	c := exec.Command(path, args[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := c.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit):
		return &exitcode.Error{Code: exit.ExitCode(), Silent: true}
	default:
		return fmt.Errorf("starting %s: %w", path, err)
	}
}
