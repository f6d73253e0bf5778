// Package handoff finds the executables installed beside kubectl-rv that
// link what kubectl-rv leaves out (rv-offline, the API server's rules;
// rv-logs, the log services' clients), and says which command lines run
// in rv-offline. It imports only the standard library, so that cmd/kubectl-rv can
// hand the common forms over during package initialisation, before the
// rest of kubectl-rv (client-go's scheme, above all) is initialised: a
// command that runs in rv-offline then does not pay kubectl-rv's start as
// well. pkg/cmd hands every other form over when its flags are parsed.
package handoff

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Executable is the name of the executable that links the API server's
// rules (cmd/rv-offline), installed beside kubectl-rv: without the rules,
// kubectl-rv hands the commands that run them (predict --offline,
// simulate) over to it. Its name has no kubectl- prefix, so kubectl never
// lists it as a plugin.
const Executable = "rv-offline"

// LogsExecutable is the name of the executable that links the log
// services' clients (cmd/rv-logs), installed beside kubectl-rv: conflicts
// --source runs in it, so that neither kubectl-rv's commands nor predict
// --offline in rv-offline pay those clients' start-up.
const LogsExecutable = "rv-logs"

// MissingError says that an executable is not where it is looked for.
type MissingError struct {
	// Name is the executable's file name, Path where it was looked for.
	Name, Path string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s is missing: %s", e.Name, e.Path)
}

// Path is the path of executable name (Executable or LogsExecutable)
// beside the executable that executable names, symbolic links resolved
// (krew links the plugin into its bin folder), or a *MissingError; an
// error when that executable is name itself, which never hands over to
// itself.
func Path(name string, executable func() (string, error)) (string, error) {
	self, err := executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return "", fmt.Errorf("finding %s: %w", name, err)
	}
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if filepath.Base(self) == name {
		return "", fmt.Errorf("%s would hand over to itself", self)
	}
	path := filepath.Join(filepath.Dir(self), name)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", &MissingError{Name: name, Path: path}
	} else if err != nil {
		return "", fmt.Errorf("finding %s: %w", name, err)
	}
	return path, nil
}

// Wanted reports whether a kubectl-rv command line (its arguments, without
// the program's name) is one of the common forms that run in rv-offline:
// `simulate` or `simulate run` first, or `predict` first with --offline
// set before any `--`. It looks at words, not at parsed flags, so it
// answers false for the other forms (global flags before the command, for
// one), which pkg/cmd hands over once cobra has parsed them. A false
// positive would cost only time: rv-offline runs every command.
func Wanted(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "simulate":
		return len(args) == 1 || args[1] == "run" || strings.HasPrefix(args[1], "-")
	case "predict":
		offline := false
		for _, a := range args[1:] {
			if a == "--" {
				break
			}
			if a == "--offline" {
				offline = true
			} else if v, ok := strings.CutPrefix(a, "--offline="); ok {
				b, err := strconv.ParseBool(v)
				offline = err == nil && b
			}
		}
		return offline
	}
	return false
}
