package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// NewCmdSimulate returns kubectl rv simulate (not built yet; see its issue).
func NewCmdSimulate(f *Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return notBuiltYet("simulate")
}
