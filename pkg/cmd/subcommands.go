package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/churn"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/completion"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/conflicts"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/doctor"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/lag"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/leases"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/owners"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/predict"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/simulate"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/version"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/watch"
)

// subcommands are kubectl rv's commands, each in its own package.
func subcommands(f *cmdutil.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	sim := simulate.NewCmdSimulate(f, streams)
	// simulate replay is a deprecated alias of watch --replay's views.
	sim.AddCommand(watch.NewCmdSimulateReplay(f, streams))
	return []*cobra.Command{
		version.NewCmdVersion(f, streams),
		watch.NewCmdWatch(f, streams),
		owners.NewCmdOwners(f, streams),
		lag.NewCmdLag(f, streams),
		predict.NewCmdPredict(f, streams),
		sim,
		doctor.NewCmdDoctor(f, streams),
		churn.NewCmdChurn(f, streams),
		conflicts.NewCmdConflicts(f, streams),
		leases.NewCmdLeases(f, streams),
		completion.NewCmdCompletion(f, streams),
	}
}
