package cmd

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	// Auth plugins (OIDC, exec) for kubeconfigs that use them, as in kubectl.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
)

const rootLong = `kubectl rv tells you why your Kubernetes writes collide.

It follows resourceVersions and managedFields: who changed an object and when
(watch), who owns which field (owners), which controllers have not caught up
with the latest spec (lag), what a write would do before it is sent (predict),
and what happens when many writers race on one object (simulate, offline).
Across a cluster: which writers collide and who loses, from the audit log
(conflicts); which objects and managers write most, silent hot loops and
fights (churn); who leads each leader election, how healthy its renewals are and
which former leaders kept acting (leases); and whether every API endpoint keeps
the resourceVersion contract clients rely on (doctor).

It never writes to the cluster unless a command says so and you pass the flag
that asks for it.

Exit codes (the same for every command): 0 nothing to report, 1 a finding the
command checks for, 2 bad usage or input, 3 the cluster could not be reached or
refused the request.

Docs: docs/COMMAND.md, at https://github.com/kubectl-rv/kubectl-rv/tree/main/docs`

const rootExample = `  # See the classic optimistic-concurrency race, offline, step by step
  kubectl rv simulate

  # Who owns which field of a Deployment
  kubectl rv owners deployment/web

  # Which objects have controllers not caught up with, cluster-wide
  kubectl rv lag -A

  # Who collides and who loses, from an API server audit log
  kubectl rv conflicts --audit-log /var/log/kubernetes/audit.log

  # Show client and server versions
  kubectl rv version`

// NewCmdRV returns the root command, kubectl rv, with all of kubectl's global
// flags (--kubeconfig, --context, -n, --server, --token, --as, ...).
func NewCmdRV(streams genericiooptions.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:     "rv",
		Short:   "Explain resourceVersion and managedFields collisions",
		Long:    rootLong,
		Example: rootExample,
		// The root only prints help; an unknown word is a usage error.
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	return cmdutil.SetUpRoot(root, streams, subcommands)
}

// Main runs kubectl rv on this process's arguments and standard streams,
// stopped by an interrupt or SIGTERM, and returns its exit code.
func Main() int {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// A second interrupt ends the process at once (exit 130 in a
		// shell): conflicts --listen analyses what it received after the
		// first.
		<-ctx.Done()
		stop()
	}()
	err := NewCmdRV(streams).ExecuteContext(ctx)
	stop()
	return cmdutil.HandleError(streams.ErrOut, err)
}
