package version

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	k8sversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	"github.com/kubectl-rv/kubectl-rv/pkg/version"
)

// VersionReport is the structured output of kubectl rv version.
type VersionReport struct {
	output.TypeMeta `json:",inline"`
	ClientVersion   version.Info     `json:"clientVersion"`
	ServerVersion   *k8sversion.Info `json:"serverVersion,omitempty"`
}

// VersionOptions are the options of kubectl rv version.
type VersionOptions struct {
	ClientOnly bool
	Output     *cmdutil.OutputFlags

	serverVersion func() (*k8sversion.Info, error)
	genericiooptions.IOStreams
}

// NewCmdVersion returns kubectl rv version.
func NewCmdVersion(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{Output: cmdutil.NewOutputFlags(output.Table, output.JSON, output.YAML), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client and server versions",
		Long:  "Print kubectl-rv's version and commit, and the API server's version unless --client is given.",
		Example: `  # Client and server versions
  kubectl rv version

  # Only the client, as JSON
  kubectl rv version --client -o json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Complete(f); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	cmd.Flags().BoolVar(&o.ClientOnly, "client", false, "Print only the client version; do not contact the cluster.")
	o.Output.AddFlags(cmd.Flags())
	return cmd
}

// Complete wires the server version lookup.
func (o *VersionOptions) Complete(f *cmdutil.Factory) error {
	o.serverVersion = func() (*k8sversion.Info, error) {
		d, err := f.Discovery()
		if err != nil {
			return nil, err
		}
		return d.ServerVersion()
	}
	return nil
}

// Validate checks the flags.
func (o *VersionOptions) Validate() error { return o.Output.Validate() }

// Run prints the versions.
func (o *VersionOptions) Run(ctx context.Context) error {
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	rep := VersionReport{TypeMeta: output.NewTypeMeta("Version"), ClientVersion: version.Get()}
	var serverErr error
	if !o.ClientOnly {
		rep.ServerVersion, serverErr = o.serverVersion()
		if serverErr != nil {
			// An error that says whose fault it is (a missing kubeconfig is
			// the user's) keeps its code; any other is the cluster's.
			var marked *exitcode.Error
			if !errors.As(serverErr, &marked) {
				serverErr = exitcode.Cluster(serverErr)
			}
			serverErr = fmt.Errorf("getting the server version: %w", serverErr)
			// Bad input (a kubeconfig that does not exist) prints nothing
			// on standard output, as every exit 2 does; an unreachable
			// cluster still shows the client's version, as kubectl does.
			if exitcode.Classify(serverErr) == exitcode.CodeUsage {
				return serverErr
			}
		}
	}
	if p.Structured() {
		if err := p.PrintObject(rep); err != nil {
			return err
		}
		return serverErr
	}
	c := rep.ClientVersion
	var b strings.Builder
	fmt.Fprintf(&b, "Client Version: %s\n", c.Version)
	if c.GitCommit != "" {
		fmt.Fprintf(&b, "Git Commit: %s\n", c.GitCommit)
	}
	if rep.ServerVersion != nil {
		fmt.Fprintf(&b, "Server Version: %s\n", text.Escape(rep.ServerVersion.GitVersion))
	}
	if _, err := io.WriteString(o.Out, b.String()); err != nil {
		return err
	}
	return serverErr
}
