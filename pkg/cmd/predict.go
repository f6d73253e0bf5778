package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// NewCmdPredict returns kubectl rv predict (not built yet; see its issue).
func NewCmdPredict(f *Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return notBuiltYet("predict")
}
