package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	// Auth plugins (OIDC, exec) for kubeconfigs that use them, as in kubectl.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	"github.com/kubectl-rv/kubectl-rv/pkg/version"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
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
// flags (--kubeconfig, --context, -n, --server, --token, --as, ...). rules
// are the API server's rules that predict --offline and simulate run
// (serverrules.Rules in rv-offline, crd.Rules in rv-full); with nil rules
// (kubectl-rv) those commands hand over to rv-offline, and with rules that
// take no CRD (rv-offline) predict --offline --schema hands over to rv-full
// (offlineExecutable, handOff).
func NewCmdRV(streams genericiooptions.IOStreams, rules writepath.Rules) *cobra.Command {
	configFlags := genericclioptions.NewConfigFlags(true).
		WithDiscoveryBurst(300).WithDiscoveryQPS(50.0)
	f := NewFactory(configFlags)
	f.rules = rules

	root := &cobra.Command{
		Use:           "rv",
		Short:         "Explain resourceVersion and managedFields collisions",
		Long:          rootLong,
		Example:       rootExample,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl rv",
		},
		// The root only prints help; an unknown word is a usage error.
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return exitcode.Usage(err) })
	configFlags.AddFlags(root.PersistentFlags())
	addKlogFlags(root.PersistentFlags())
	RegisterGlobalFlagCompletion(root, f)
	rest.SetDefaultWarningHandler(newWarningHandler(streams.ErrOut))

	root.AddCommand(
		NewCmdVersion(f, streams),
	)
	addSubcommands(root, f, streams)

	for _, c := range root.Commands() {
		wrapRunE(c, f, streams.ErrOut)
	}
	registerFlagValueCompletion(root)
	return root
}

// annotationNoKubeconfig marks a command (and its subcommands) that never
// talks to the cluster the kubeconfig names, such as the offline simulator:
// its errors must not be blamed on that cluster.
const annotationNoKubeconfig = "kubectl-rv.dev/no-kubeconfig"

// wrapRunE makes every command's errors name the server when the cluster
// could not be reached, and summarises the server's warnings it held back
// (warningFilter) once the command is done.
func wrapRunE(c *cobra.Command, f *Factory, errOut io.Writer) {
	if c.Annotations[annotationNoKubeconfig] == "true" {
		return
	}
	if c.RunE != nil {
		run := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			f.warnings.flush(errOut)
			return f.decorate(err)
		}
	}
	for _, sub := range c.Commands() {
		wrapRunE(sub, f, errOut)
	}
}

// Main runs kubectl rv with rules (see NewCmdRV) on this process's
// arguments and standard streams, stopped by an interrupt or SIGTERM, and
// returns its exit code: the main of kubectl-rv, rv-offline and rv-full.
func Main(rules writepath.Rules) int {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := NewCmdRV(streams, rules).ExecuteContext(ctx)
	stop()
	return HandleError(streams.ErrOut, err)
}

// HandleError prints err the way kubectl does ("error: ...") and returns the
// process exit code (docs/exit-codes.md).
func HandleError(errOut io.Writer, err error) int {
	if err == nil {
		return exitcode.CodeOK
	}
	code := exitcode.Classify(err)
	if code == exitcode.CodeInterrupted {
		fmt.Fprintln(errOut, "interrupted")
		return code
	}
	if !exitcode.IsSilent(err) {
		msg := escapeLines(err.Error())
		if code == exitcode.CodeUsage && strings.HasPrefix(msg, "unknown command") {
			msg += "\nSee 'kubectl rv --help' for the commands."
		}
		if code == exitcode.CodeFinding {
			// A finding is the answer the command was asked for, not an
			// error: its summary line has no "error: " prefix.
			fmt.Fprintln(errOut, msg)
		} else {
			fmt.Fprintf(errOut, "error: %s\n", msg)
		}
	}
	return code
}

// newWarningHandler prints the API server's warnings as kubectl does
// ("Warning: ...", each once), escaped for the terminal: the text is the
// server's, and an admission webhook's at that.
func newWarningHandler(w io.Writer) rest.WarningHandler {
	return escapingWarnings{rest.NewWarningWriter(w, rest.WarningWriterOptions{Deduplicate: true})}
}

type escapingWarnings struct{ next rest.WarningHandler }

func (e escapingWarnings) HandleWarningHeader(code int, agent, message string) {
	e.next.HandleWarningHeader(code, agent, text.Escape(message))
}

// escapeLines escapes each line of an error message for the terminal:
// messages quote files and servers (a kind holding ESC]0;title BEL would
// retitle the terminal), and the sites that build them need not all
// remember to. Line breaks stay: some messages, such as the server's apply
// conflicts, are lists.
func escapeLines(msg string) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		lines[i] = text.Escape(l)
	}
	return strings.Join(lines, "\n")
}

func userAgent() string {
	return "kubectl-rv/" + version.Get().Version
}
