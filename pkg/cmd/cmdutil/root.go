package cmdutil

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// SetUpRoot makes root the kubectl rv root command: kubectl's global flags
// (--kubeconfig, --context, -n, --server, --token, --as, ...) and klog's
// -v, their completion, the server's warnings printed as kubectl prints
// them, usage errors as exit 2, and the commands that add returns from the
// one Factory over those flags. Each command's errors then name the server
// when the cluster could not be reached, and the warnings it held back are
// summed up once it is done.
func SetUpRoot(root *cobra.Command, streams genericiooptions.IOStreams, add func(*Factory, genericiooptions.IOStreams) []*cobra.Command) *cobra.Command {
	configFlags := genericclioptions.NewConfigFlags(true).
		WithDiscoveryBurst(300).WithDiscoveryQPS(50.0)
	f := NewFactory(configFlags)
	root.SilenceUsage = true
	root.SilenceErrors = true
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = "kubectl " + root.Name()
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return exitcode.Usage(err) })
	configFlags.AddFlags(root.PersistentFlags())
	AddKlogFlags(root.PersistentFlags())
	RegisterGlobalFlagCompletion(root, f)
	rest.SetDefaultWarningHandler(NewWarningHandler(streams.ErrOut))
	root.AddCommand(add(f, streams)...)
	for _, c := range root.Commands() {
		wrapRunE(c, f, streams.ErrOut)
	}
	RegisterFlagValueCompletion(root)
	return root
}

// wrapRunE makes every command's errors name the server when the cluster
// could not be reached, and summarises the server's warnings it held back
// (warningFilter) once the command is done.
func wrapRunE(c *cobra.Command, f *Factory, errOut io.Writer) {
	if c.Annotations[AnnotationNoKubeconfig] == "true" {
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
