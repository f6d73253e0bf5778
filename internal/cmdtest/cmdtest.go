// Package cmdtest runs kubectl rv commands in process for the tests of the
// command packages (pkg/cmd/...): one command under a root with kubectl's
// global flags, as pkg/cmd's NewCmdRV sets it up, without importing pkg/cmd
// (which imports every command package).
package cmdtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
)

// NewCmd builds a command from the factory and streams, as the command
// packages' NewCmdX do.
type NewCmd func(*cmdutil.Factory, genericiooptions.IOStreams) *cobra.Command

// Run executes kubectl rv ARGS, where the root has only the commands
// newCmds build, and returns stdout, stderr and the exit code main would
// use.
func Run(t *testing.T, newCmds []NewCmd, args ...string) (string, string, int) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	root := Root(streams, newCmds...)
	root.SetArgs(args)
	code := cmdutil.HandleError(errOut, root.ExecuteContext(context.Background()))
	return out.String(), errOut.String(), code
}

// Root is the root command kubectl rv with only the commands newCmds
// build, set up as pkg/cmd's NewCmdRV sets it up.
func Root(streams genericiooptions.IOStreams, newCmds ...NewCmd) *cobra.Command {
	return cmdutil.SetUpRoot(&cobra.Command{Use: "rv", Args: cobra.NoArgs}, streams, func(f *cmdutil.Factory, s genericiooptions.IOStreams) []*cobra.Command {
		var cmds []*cobra.Command
		for _, n := range newCmds {
			cmds = append(cmds, n(f, s))
		}
		return cmds
	})
}

// FileWriter returns a function that writes content to the file name in
// dir (making its directories) and returns its path.
func FileWriter(t *testing.T, dir string) func(name, content string) string {
	return func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}
