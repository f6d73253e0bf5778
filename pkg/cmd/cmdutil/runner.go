package cmdutil

import (
	"context"

	"github.com/spf13/cobra"
)

// runner is a command's options as kubectl's commands have them.
type runner interface {
	Complete(f *Factory, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// FlagsSeer is a runner whose meaning depends on whether a flag was set,
// not only on its value (lag's --timeout, owners' --expect-manager):
// RunE tells it before Complete.
type FlagsSeer interface {
	SeeFlags(changed func(name string) bool)
}

// runE runs o as kubectl runs a command: complete from the flags and
// arguments, validate without I/O, then run.
func RunE(f *Factory, o runner) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if s, ok := o.(FlagsSeer); ok {
			s.SeeFlags(c.Flags().Changed)
		}
		if err := o.Complete(f, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(c.Context())
	}
}
