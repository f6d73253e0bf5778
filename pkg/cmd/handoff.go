package cmd

import (
	"errors"
	"os"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/handoff"
)

// OfflineExecutable is the name of the executable that links the API
// server's rules (see pkg/handoff).
const OfflineExecutable = handoff.Executable

// handOff runs the command line this process was started with in
// rv-offline, found beside this executable (symbolic links resolved, as
// krew links the plugin into its bin directory), with the same
// environment and standard streams: on Unix it replaces this process, so
// signals and the exit code are rv-offline's own. It returns only an
// error, or, where a process cannot be replaced (Windows), rv-offline's
// exit code as a silent error. cmd/kubectl-rv hands the common command
// lines over before this, during its package initialisation.
func handOff() error {
	path, err := offlinePath(os.Executable)
	if err != nil {
		return err
	}
	return execOffline(path, os.Args)
}

// offlinePath is rv-offline's path beside the executable that executable
// names, or a usage error saying what to reinstall.
func offlinePath(executable func() (string, error)) (string, error) {
	path, err := handoff.Path(executable)
	var missing *handoff.MissingError
	if errors.As(err, &missing) {
		return "", exitcode.Usagef("this command runs in %s (which links the API server's rules and the log services' clients), and %s is missing: reinstall kubectl rv (kubectl krew reinstall rv); in a source checkout, make build builds both, and go run ./cmd/rv-offline runs the command without kubectl-rv", missing.Name, missing.Path)
	}
	return path, err
}
