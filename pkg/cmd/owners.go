package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// NewCmdOwners returns kubectl rv owners (not built yet; see its issue).
func NewCmdOwners(f *Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return notBuiltYet("owners")
}
