package cmd

import (
	"github.com/spf13/cobra"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// notBuiltYet is a hidden command for a subcommand whose issue is still
// open; each is replaced by the real command in its own file.
func notBuiltYet(name string) *cobra.Command {
	return &cobra.Command{
		Use:    name,
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return exitcode.Usagef("kubectl rv %s is not available in this build yet", name)
		},
	}
}
