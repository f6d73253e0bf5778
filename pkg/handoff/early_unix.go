//go:build !windows

package handoff

import (
	"os"
	"syscall"
)

// Exec replaces this process with path, given args (args[0] becomes
// path), with the same environment and standard streams: signals and the
// exit code are the new program's own. It returns only an error.
func Exec(path string, args []string) error {
	argv := append([]string{path}, args[1:]...)
	return syscall.Exec(path, argv, os.Environ())
}

// Early hands this process over to the executable Target names for its
// command line, when that is found beside this executable (and is not
// this executable: see Path). Otherwise it returns, and the command's
// own hand-over, after its flags are parsed, reports what is wrong.
func Early() {
	name := Target(os.Args[1:])
	if name == "" {
		return
	}
	if path, err := Path(name, os.Executable); err == nil {
		_ = Exec(path, os.Args)
	}
}
