// Package handoff finds the executables installed beside kubectl-rv that
// link what kubectl-rv leaves out (rv-offline, the API server's rules for
// the built-in kinds; rv-full, those, custom resources' rules and the log
// services' clients), and names the one each common command line runs in
// (Target). It imports only the standard library, so that cmd/kubectl-rv can
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
// rules for the built-in kinds (cmd/rv-offline), installed beside
// kubectl-rv: without the rules, kubectl-rv hands the commands that run
// them (predict --offline, simulate) over to it. Its name has no kubectl-
// prefix, so kubectl never lists it as a plugin.
const Executable = "rv-offline"

// FullExecutable is the name of the executable that links everything
// (cmd/rv-full), installed beside kubectl-rv: the API server's rules,
// custom resources' rules and the log services' clients. predict
// --offline --schema and conflicts --source run in it, so that neither
// kubectl-rv's commands nor a prediction of built-in kinds in rv-offline
// pay the start-up of what only they need.
const FullExecutable = "rv-full"

// MissingError says that an executable is not where it is looked for.
type MissingError struct {
	// Name is the executable's file name, Path where it was looked for.
	Name, Path string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s is missing: %s", e.Name, e.Path)
}

// Path is the path of executable name (Executable or FullExecutable)
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

// Target names the executable that a kubectl-rv command line (its
// arguments, without the program's name) runs in when it is one of the
// common forms: rv-offline for `simulate` or `simulate run` first, or
// `predict` first with --offline set before any `--`; rv-full for such a
// predict that also names a --schema (custom resources' rules). It is ""
// for every other command line. It looks at words, not at parsed flags, so
// it answers "" for the other forms (global flags before the command, for
// one), which pkg/cmd hands over once cobra has parsed them. A false
// positive would cost only time: rv-offline and rv-full run every command,
// and rv-offline hands over to rv-full what needs it.
func Target(args []string) string {
	if len(args) == 0 {
		return ""
	}
	switch args[0] {
	case "simulate":
		if len(args) == 1 || args[1] == "run" || strings.HasPrefix(args[1], "-") {
			return Executable
		}
	case "predict":
		offline, schema := false, false
		for _, a := range args[1:] {
			if a == "--" {
				break
			}
			switch {
			case a == "--offline":
				offline = true
			case strings.HasPrefix(a, "--offline="):
				b, err := strconv.ParseBool(strings.TrimPrefix(a, "--offline="))
				offline = err == nil && b
			case a == "--schema" || strings.HasPrefix(a, "--schema="):
				schema = true
			}
		}
		switch {
		case offline && schema:
			return FullExecutable
		case offline:
			return Executable
		}
	}
	return ""
}
