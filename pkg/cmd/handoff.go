package cmd

import (
	"errors"
	"os"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/handoff"
)

// OfflineExecutable is the name of the executable that links the API
// server's rules, LogsExecutable that of the executable that links the
// log services' clients (see pkg/handoff).
const (
	OfflineExecutable = handoff.Executable
	LogsExecutable    = handoff.LogsExecutable
)

// links says what each executable links that kubectl-rv does not.
var links = map[string]string{
	OfflineExecutable: "the API server's rules",
	LogsExecutable:    "the log services' clients",
}

// handOff runs the command line this process was started with in
// executable name (OfflineExecutable or LogsExecutable), found beside this
// executable (symbolic links resolved, as krew links the plugin into its
// bin directory), with the same environment and standard streams: on Unix
// it replaces this process, so signals and the exit code are the other
// executable's own. It returns only an error, or, where a process cannot
// be replaced (Windows), the other executable's exit code as a silent
// error. cmd/kubectl-rv hands the common command lines of rv-offline over
// before this, during its package initialisation.
func handOff(name string) error {
	path, err := executablePath(name, os.Executable)
	if err != nil {
		return err
	}
	return execOther(path, os.Args)
}

// executablePath is the path of executable name beside the executable
// that executable names, or a usage error saying what to reinstall.
func executablePath(name string, executable func() (string, error)) (string, error) {
	path, err := handoff.Path(name, executable)
	var missing *handoff.MissingError
	if errors.As(err, &missing) {
		return "", exitcode.Usagef("this command runs in %s (which links %s), and %s is missing: reinstall kubectl rv (kubectl krew reinstall rv); in a source checkout, make build builds all three executables, and go run ./cmd/%s runs the command without kubectl-rv", missing.Name, links[name], missing.Name, name)
	}
	return path, err
}
