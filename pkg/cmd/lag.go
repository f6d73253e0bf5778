package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// NewCmdLag returns kubectl rv lag (not built yet; see its issue).
func NewCmdLag(f *Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return notBuiltYet("lag")
}
