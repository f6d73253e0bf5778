package cmd

import (
	"errors"
	"os"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/handoff"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// OfflineExecutable is the name of the executable that links the API
// server's rules for the built-in kinds, FullExecutable that of the
// executable that links everything: those, custom resources' rules and
// the log services' clients (see pkg/handoff).
const (
	OfflineExecutable = handoff.Executable
	FullExecutable    = handoff.FullExecutable
)

// links says what each executable links that kubectl-rv does not.
var links = map[string]string{
	OfflineExecutable: "the API server's rules",
	FullExecutable:    "the API server's rules, custom resources' rules and the log services' clients",
}

// offlineExecutable names the executable that predict --offline runs in
// when this one, with rules, cannot run it (schema: --schema is given):
// rv-full where custom resources' rules are wanted and rules cannot take
// a schema (schemaRules), rv-offline where there are no rules at all; ""
// where it runs here.
func offlineExecutable(rules writepath.Rules, schema bool) string {
	if _, ok := rules.(schemaRules); schema && !ok {
		return FullExecutable
	}
	if rules == nil {
		return OfflineExecutable
	}
	return ""
}

// handOff runs the command line this process was started with in
// executable name (OfflineExecutable or FullExecutable), found beside this
// executable (symbolic links resolved, as krew links the plugin into its
// bin directory), with the same environment and standard streams: on Unix
// it replaces this process, so signals and the exit code are the other
// executable's own. It returns only an error, or, where a process cannot
// be replaced (Windows), the other executable's exit code as a silent
// error. cmd/kubectl-rv hands the common command lines of predict
// --offline and simulate over before this, during its package
// initialisation.
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
