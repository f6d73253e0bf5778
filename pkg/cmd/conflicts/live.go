package conflicts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/conflicts"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/conflictsprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

const liveLong = `Count the 409 Conflicts the API server answers, per second, from /metrics.

conflicts live reads the API server's /metrics (as kubectl get --raw
/metrics does, through the kubeconfig and kubectl's global flags) at the
start and the end of --for, and prints the increase of
apiserver_request_total{code="409"} by group, resource, subresource and
verb, most first. On a terminal it also prints the rate every 2s.

It needs no audit log, and names no writer, object or cause: for those,
run kubectl rv conflicts --audit-log. One read sees one API-server
replica; behind a load balancer each replica counts only what it served.

Exit status: 0; 2 on bad usage; 3 when /metrics cannot be read (no
access, unreachable, or not the Prometheus text format).

Docs: docs/conflicts.md#live-409s-per-second-from-metrics`

const liveExample = `  # 409s per second across the cluster, over 30 seconds
  kubectl rv conflicts live --for 30s

  # The same, for a program
  kubectl rv conflicts live --for 30s -o json`

// LiveOptions are the options of kubectl rv conflicts live.
type LiveOptions struct {
	Output *cmdutil.OutputFlags
	For    time.Duration
	// name is how the mode was asked for, for messages: "conflicts live",
	// or "--live" (the deprecated flag).
	name string
	// factory, server and scrape are the API server's client, its URL and
	// a GET of its /metrics, built in Run (tests set scrape).
	factory *cmdutil.Factory
	server  string
	scrape  func(context.Context) ([]byte, error)
	genericiooptions.IOStreams
}

func newLiveOptions(streams genericiooptions.IOStreams) *LiveOptions {
	return &LiveOptions{Output: cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML), For: 10 * time.Second,
		name: "conflicts live", IOStreams: streams}
}

// NewCmdConflictsLive returns kubectl rv conflicts live.
func NewCmdConflictsLive(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := newLiveOptions(streams)
	cmd := &cobra.Command{
		Use:     "live [--for DURATION]",
		Short:   "Count the 409s the API server answers, per second, from /metrics",
		Long:    liveLong,
		Example: liveExample,
		Args:    cobra.NoArgs,
		RunE:    cmdutil.RunE(f, o),
	}
	o.Output.AddFlags(cmd.Flags())
	cmd.Flags().DurationVar(&o.For, "for", o.For, "The time between the two reads of /metrics.")
	return cmd
}

// Complete keeps the factory: only Run contacts the cluster.
func (o *LiveOptions) Complete(f *cmdutil.Factory, _ []string) error {
	o.factory = f
	return nil
}

// Validate checks the flags without I/O.
func (o *LiveOptions) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	if o.For <= 0 {
		return exitcode.Usagef("--for must be positive, got %s", o.For)
	}
	return nil
}

// metricsGetter builds the GET of /metrics from kubectl's global flags
// (--kubeconfig, --context, --server, --token, ...), as kubectl get --raw
// /metrics does.
func (o *LiveOptions) metricsGetter() error {
	if o.scrape != nil {
		return nil
	}
	cfg, err := o.factory.RESTConfig(0, 0)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	rc := dc.RESTClient()
	o.server = cfg.Host
	o.scrape = func(ctx context.Context) ([]byte, error) {
		b, err := rc.Get().AbsPath("/metrics").SetHeader("Accept", "text/plain;version=0.0.4, application/json;q=0.5").DoRaw(ctx)
		if apierrors.IsForbidden(err) {
			// client-go leaves a refusal it cannot decode as "unknown";
			// the body, a Status or text, names the user.
			return nil, forbiddenBody(err, b)
		}
		return b, err
	}
	return nil
}

// liveEvery is how often the live count reads /metrics in between when
// the output is a terminal, for the per-interval view.
const liveEvery = 2 * time.Second

// Run reads /metrics twice, --for apart, and prints the 409s counted in
// between; on a terminal it also reads every liveEvery and prints a line
// per read.
func (o *LiveOptions) Run(ctx context.Context) error {
	if err := o.metricsGetter(); err != nil {
		return err
	}
	get := func(ctx context.Context) ([]byte, error) {
		b, err := o.scrape(ctx)
		if exitcode.IsForbidden(err) {
			return nil, exitcode.Refused(err, o.name, "GET /metrics", `get on the non-resource URL /metrics, e.g. a ClusterRole with rules [{nonResourceURLs: ["/metrics"], verbs: [get]}] and a ClusterRoleBinding to it`)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: GET /metrics: %w", o.name, err)
		}
		return b, nil
	}
	started := func(time.Time) {
		fmt.Fprintf(o.ErrOut, "read %s/metrics; reading it again in %s\n", text.Escape(o.server), o.For)
	}
	cfg := conflicts.LiveConfig{For: o.For, Started: started}
	if o.Output.Format() == output.Table && output.IsTerminal(o.Out) {
		var start time.Time
		cfg.Started = func(at time.Time) { start = at; started(at) }
		cfg.Every = liveEvery
		cfg.Tick = func(r *conflicts.LiveReport) { _ = conflictsprint.PrintTick(o.Out, r, start) }
	}
	rep, err := conflicts.Live(ctx, get, cfg)
	if errors.Is(err, conflicts.ErrBadMetrics) {
		return exitcode.Cluster(fmt.Errorf("%s: %s/metrics: %w", o.name, text.Escape(o.server), err))
	}
	if err != nil {
		return err
	}
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	if p.Structured() {
		return p.PrintObject(conflictsprint.NewLiveDocument(rep, conflictsprint.LiveScope{Server: o.server, For: o.For.String()}))
	}
	return conflictsprint.PrintLive(p, rep, o.server)
}
