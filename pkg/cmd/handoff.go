package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// OfflineExecutable is the name of the executable that links the API
// server's rules (cmd/rv-offline), installed beside kubectl-rv: without
// the rules, kubectl-rv hands the commands that run them (predict
// --offline, simulate) over to it. Its name has no kubectl- prefix, so
// kubectl never lists it as a plugin.
const OfflineExecutable = "rv-offline"

// handOff runs the command line this process was started with in
// rv-offline, found beside this executable (symbolic links resolved, as
// krew links the plugin into its bin directory), with the same
// environment and standard streams: on Unix it replaces this process, so
// signals and the exit code are rv-offline's own. It returns only an
// error, or, where a process cannot be replaced (Windows), rv-offline's
// exit code as a silent error.
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
	self, err := executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return "", fmt.Errorf("finding %s: %w", OfflineExecutable, err)
	}
	name := OfflineExecutable
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	path := filepath.Join(filepath.Dir(self), name)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", exitcode.Usagef("this command runs the API server's rules, which are in %s, and %s is missing: reinstall kubectl rv (kubectl krew reinstall rv); in a source checkout, make build builds both, and go run ./cmd/rv-offline runs the command without kubectl-rv", name, path)
	} else if err != nil {
		return "", fmt.Errorf("finding %s: %w", OfflineExecutable, err)
	}
	return path, nil
}
