package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/doctor"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/doctorprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// doctorLong is doctor's --help.
const doctorLong = `Check that API endpoints keep the resourceVersion contract clients rely on.

For each resource type (by default every listable and watchable one the
cluster serves, built-in, custom and aggregated, at its preferred version),
doctor lists and watches it in the ways client-go, controller-runtime and
kubectl do, and says for each check whether the endpoint passed, failed,
warned or was skipped, what it saw, and which clients break when it fails.
--check runs only the checks it names.

Verdicts follow one rule: fail only where a real client (client-go's
reflector and informers, kubectl get -w) would lose, duplicate or misorder
data, or hang; warn where the behaviour is legal but costly or surprising,
or where the server or its storage did not answer ("unreachable"); skip
where the cluster cannot show it. Every warning and skip says why.

With several API servers, doctor also holds them to each other
(cross-server-rvs): name them with --api-servers, or let doctor find them
among the kubernetes Service's endpoints that answer from here.

Only reads are sent, unless --write-probe NAMESPACE: it creates, updates
twice and deletes one ConfigMap named kubectl-rv-doctor-* there.

Without -n, namespaced types are listed across all namespaces. A type you
may not list gets a warning and no verdicts: the results are then partial.

Exit status: 0 when no check failed, 1 when one did, 2 on bad usage, 3 when
the cluster cannot be reached, or refuses or does not answer for every type.

Docs: docs/doctor.md`

const doctorExample = `  # Every resource type of the cluster
  kubectl rv doctor

  # Only Deployments and a custom resource, with every check's detail
  kubectl rv doctor deployments.apps,widgets.example.com -o wide

  # Only the streaming-list check, on every type (client-go 0.35+ informers)
  kubectl rv doctor --check watch-initial-events-end

  # Also check writes, with a throwaway ConfigMap in the namespace "scratch"
  kubectl rv doctor configmaps --write-probe scratch

  # Two API servers of one cluster: can clients fail over between them?
  kubectl rv doctor configmaps,leases.coordination.k8s.io --api-servers https://10.0.0.11:6443,https://10.0.0.12:6443

  # Machine-readable, for CI
  kubectl rv doctor -o json

  # In CI: a failed check is an error annotation (GitHub Actions); -o junit and -o sarif for reports
  kubectl rv doctor -o github`

// Doctor's client rate limit: a few requests per check and type must not
// wait on kubectl's default of 5 requests per second.
const (
	doctorQPS   = 50
	doctorBurst = 100
)

// DoctorOptions are the options of kubectl rv doctor.
type DoctorOptions struct {
	Output       *cmdutil.OutputFlags
	Parallel     int
	Samples      int
	WatchTimeout time.Duration
	Checks       []string
	WriteProbe   string
	APIServers   []string

	args      []string
	namespace string
	clients   doctor.Clients
	// types returns the types to probe and discovery's warnings.
	types func() (apitypes.Discovered, error)
	genericiooptions.IOStreams
}

// NewCmdDoctor returns kubectl rv doctor.
func NewCmdDoctor(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	def := doctor.NewConfig()
	o := &DoctorOptions{
		Output:   cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML, output.GitHub, output.JUnit, output.SARIF),
		Parallel: def.Parallel, Samples: def.LatencySamples, WatchTimeout: def.WatchTimeout,
		IOStreams: streams,
	}
	var ids []string
	for _, c := range doctor.Checks {
		ids = append(ids, c.ID)
	}
	cmd := &cobra.Command{
		Use:               "doctor [TYPE[,TYPE...]]",
		Short:             "Check that API endpoints keep the resourceVersion contract clients rely on",
		Long:              doctorLong,
		Example:           doctorExample,
		ValidArgsFunction: cmdutil.ResourceTypeCompletion(f),
		RunE:              cmdutil.RunE(f, o),
	}
	fs := cmd.Flags()
	o.Output.AddFlags(fs)
	fs.IntVar(&o.Parallel, "parallel", o.Parallel, "How many types to probe at once.")
	fs.IntVar(&o.Samples, "samples", o.Samples, "How many consistent and cached lists to time for consistent-list-latency.")
	fs.DurationVar(&o.WatchTimeout, "watch-timeout", o.WatchTimeout, "The timeout doctor's watches ask the server for; a bookmark is due shortly before it.")
	fs.StringSliceVar(&o.Checks, "check", nil, "Run only these checks (repeatable or comma separated): "+strings.Join(ids, ", ")+".")
	fs.StringVar(&o.WriteProbe, "write-probe", "", "WRITES: create, update and delete one ConfigMap in this namespace to check that resourceVersions increase across writes.")
	fs.StringSliceVar(&o.APIServers, "api-servers", nil, "The cluster's other API servers (https URLs, repeatable or comma separated), reached with the kubeconfig's credentials, for cross-server-rvs. Default: the kubernetes Service's endpoints that answer from here.")
	_ = cmd.RegisterFlagCompletionFunc("check", cobra.FixedCompletions(ids, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("write-probe", func(c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return cmdutil.ResourceNameCompletion(f, "namespaces")(c, nil, toComplete)
	})
	return cmd
}

// Complete resolves the namespace and the clients.
func (o *DoctorOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.args = args
	ns, explicit, err := f.Namespace()
	if err != nil {
		return err
	}
	if explicit {
		o.namespace = ns
	}
	cfg, err := f.RESTConfig(doctorQPS, doctorBurst)
	if err != nil {
		return err
	}
	cfg = doctor.FirstAnswers(cfg)
	if o.clients.Metadata, err = metadata.NewForConfig(cfg); err != nil {
		return err
	}
	if o.clients.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	o.clients.Peer = func(server string) (metadata.Interface, error) {
		c := rest.CopyConfig(cfg)
		c.Host = server
		return metadata.NewForConfig(c)
	}
	o.clients.Server = cfg.Host
	o.types = func() (apitypes.Discovered, error) { return cmdutil.ResolveAPITypes(f, o.args, true) }
	return nil
}

// Validate checks the flags without I/O.
func (o *DoctorOptions) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	if err := cmdutil.CheckTypeList(o.args, "doctor checks"); err != nil {
		return err
	}
	for _, id := range o.Checks {
		if _, ok := doctor.Info(id); !ok {
			return exitcode.Usagef("--check %q is not a check: use one of %s", id, strings.Join(checkIDs(), ", "))
		}
	}
	switch {
	case o.Parallel < 1:
		return exitcode.Usagef("--parallel must be at least 1, got %d", o.Parallel)
	case o.Samples < 1:
		return exitcode.Usagef("--samples must be at least 1, got %d", o.Samples)
	case o.WatchTimeout < 2*time.Second:
		return exitcode.Usagef("--watch-timeout must be at least 2s (the server's bookmark comes 2s before it), got %s", o.WatchTimeout)
	case slices.Contains(o.Checks, doctor.WriteRVsIncreasing) && o.WriteProbe == "":
		return exitcode.Usagef("--check %s needs --write-probe NAMESPACE", doctor.WriteRVsIncreasing)
	}
	for _, s := range o.APIServers {
		if u, err := url.Parse(s); err != nil || u.Scheme != "https" || u.Host == "" {
			return exitcode.Usagef("--api-servers %q is not an https URL: use https://HOST:PORT", s)
		}
	}
	return nil
}

func checkIDs() []string {
	var ids []string
	for _, c := range doctor.Checks {
		ids = append(ids, c.ID)
	}
	return ids
}

func (o *DoctorOptions) config() doctor.Config {
	cfg := doctor.NewConfig()
	cfg.Namespace = o.namespace
	cfg.Parallel = o.Parallel
	cfg.LatencySamples = o.Samples
	cfg.WatchTimeout = o.WatchTimeout
	cfg.Checks = o.Checks
	cfg.WriteProbe = o.WriteProbe
	cfg.APIServers = o.APIServers
	cfg.Warn = func(w string) { output.Warnf(o.ErrOut, "%s", w) }
	return cfg
}

// Run probes the types, prints the verdicts and maps them to an exit code.
func (o *DoctorOptions) Run(ctx context.Context) error {
	types, err := o.types()
	if err != nil {
		return err
	}
	for _, w := range types.Warnings {
		output.Warnf(o.ErrOut, "%s", w)
	}
	rep, err := doctor.Run(ctx, o.clients, types.Types, o.config())
	if pe := (*doctor.PreflightError)(nil); errors.As(err, &pe) {
		return o.preflightErr(pe.Err)
	}
	if err != nil {
		return err
	}
	rep.Warnings = append(types.Warnings, rep.Warnings...)
	if err := o.print(rep, types.Types); err != nil {
		return err
	}
	return o.exit(rep)
}

func (o *DoctorOptions) print(rep *doctor.Report, types []apitypes.Type) error {
	for _, r := range rep.Resources {
		if r.Warning != "" {
			output.Warnf(o.ErrOut, "%s: %s", r.Name(), r.Warning)
		}
	}
	if f := o.Output.Format(); f.CI() {
		return doctorprint.PrintCI(o.Out, f, rep, cmdutil.CITool())
	}
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	if p.Structured() {
		scope := doctorprint.Scope{Namespace: o.namespace, WriteProbe: o.WriteProbe}
		for _, t := range types {
			scope.Types = append(scope.Types, t.Name())
		}
		return p.PrintObject(doctorprint.NewDocument(rep, scope))
	}
	return doctorprint.Print(p, rep, doctorprint.Options{Details: o.Output.Format() == output.Wide || len(o.args) > 0})
}

// preflightErr is the command's error when --write-probe cannot run.
func (o *DoctorOptions) preflightErr(err error) error {
	switch {
	case errors.Is(err, doctor.ErrNoProbeNamespace):
		return exitcode.Usagef("--write-probe %s: no such namespace: create it, or name one where you may create ConfigMaps", text.Escape(o.WriteProbe))
	case exitcode.IsForbidden(err):
		ns := text.Escape(o.WriteProbe)
		return exitcode.Refused(err, "--write-probe "+ns, "a dry-run create of the probe ConfigMap", "create on configmaps in namespace "+ns)
	}
	return exitcode.Cluster(fmt.Errorf("--write-probe %s: the server refused a dry-run create of the probe ConfigMap: %w", text.Escape(o.WriteProbe), err))
}

// exit is 1 when a check failed, 3 when no type could be probed at all.
func (o *DoctorOptions) exit(rep *doctor.Report) error {
	s := rep.Summary
	switch {
	case s.Resources > 0 && s.Forbidden+s.Unreachable == s.Resources:
		return exitcode.Cluster(fmt.Errorf("every type was refused or did not answer: %s", rep.Resources[0].Warning))
	case s.Fail > 0:
		return exitcode.SilentFinding()
	}
	return nil
}
