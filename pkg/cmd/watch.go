package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// NewCmdWatch returns kubectl rv watch (not built yet; see its issue).
func NewCmdWatch(f *Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return notBuiltYet("watch")
}
