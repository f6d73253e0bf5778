package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// addSubcommands registers the engine commands, each in its own file.
func addSubcommands(root *cobra.Command, f *Factory, streams genericiooptions.IOStreams) {
	root.AddCommand(
		NewCmdWatch(f, streams),
		NewCmdOwners(f, streams),
		NewCmdLag(f, streams),
		NewCmdPredict(f, streams),
		NewCmdSimulate(f, streams),
		NewCmdDoctor(f, streams),
		NewCmdChurn(f, streams),
		NewCmdConflicts(f, streams),
		NewCmdLeases(f, streams),
	)
}
