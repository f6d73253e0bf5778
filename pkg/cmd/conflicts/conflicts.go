package conflicts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/conflicts"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/conflictsprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// conflictsLong is conflicts' --help.
const conflictsLong = `Find which writes collide in a cluster, who loses to whom, and why.

conflicts reads the API server's audit log (--audit-log: JSON lines of
audit.k8s.io/v1 Event, Metadata level is enough; a file, a directory of
rotated files, a .gz file, - for stdin, or the cloud CLIs' exports), its
audit webhook (--listen) or a log service (--source), and shows (--view):

  objects    the hottest objects: attempts, 409s, successes, writers
  writers    per writer (user/field manager@pod): attempts, 409s, rate,
             retry chains, give-ups and the writers it lost to
  timeline   with --object: every write attempt on one object in order
  causes     why each 409 happened, with a one-line fix
  top        every request, reads too, by --by user|verb|resource|...:
             count, rate, latency; hot loops (--hot-rate, --hot-for)
  wasted     per writer: creates that already existed, no-op writes, 409s

A retry is a writer's next attempt after a 409 that shows it re-read,
within --retry-window; a 409 not retried is a give-up. --object, -n,
--resource, --since and --until restrict every figure; --writer, --verb,
--subresource and --status choose the attempts shown.

--scenario FILE.yaml writes a simulate scenario reproducing the contention.
kubectl rv conflicts live reads /metrics instead: 409s per second.

Exit status: 0; 1 with --fail-on-rate R when a writer's conflict rate
exceeds R, or --fail-on on a hot loop; 2 on bad usage or a bad log; 3 when
a --source service refuses.

Docs: docs/conflicts.md`

const conflictsExample = `  # The hottest objects in an API server's audit log
  kubectl rv conflicts --audit-log /var/log/kubernetes/audit.log

  # Who loses to whom, over a directory of rotated, gzipped logs
  kubectl rv conflicts --audit-log /var/log/kubernetes/ --view writers

  # Every write attempt on one ConfigMap, with retry chains and winners
  kubectl rv conflicts --audit-log audit.log --object configmaps/leader -n kube-system

  # Why the 409s happened, from stdin, between two times
  zcat audit.log.gz | kubectl rv conflicts --audit-log - --view causes --since 2026-11-24T10:00:00Z --until 2026-11-24T11:00:00Z

  # The fields server-side appliers fight over, with their owners (FIELDS)
  kubectl rv conflicts --audit-log audit.log --view causes -o wide

  # Who loads the API server: requests per user and verb, with their latency
  kubectl rv conflicts --audit-log audit.log --view top --by user --by verb

  # Exit 1 on a client that gets one object 5 times a second for a minute or more
  kubectl rv conflicts --audit-log audit.log --view top --fail-on hot-read --hot-rate 5 --hot-for 1m

  # Creates of names that exist, writes that changed nothing, and 409s, per writer
  kubectl rv conflicts --audit-log audit.log --view wasted

  # The writers of one namespace over the last 5 minutes
  kubectl rv conflicts --audit-log /var/log/kubernetes/ --view writers -n team-a --since 5m

  # What kube-controller-manager's status writes lost, and to whom
  kubectl rv conflicts --audit-log audit.log --view writers --writer kube-controller-manager --subresource status

  # Every 409 on one object, whoever made it
  kubectl rv conflicts --audit-log audit.log --object deploy/web -n team-a --status 409

  # CI: fail when a writer has more than 5% of its writes rejected
  kubectl rv conflicts --audit-log e2e-audit.log --fail-on-rate 0.05 -o json

  # The same, as annotations per cause (GitHub Actions); -o junit and -o sarif for reports
  kubectl rv conflicts --audit-log e2e-audit.log --fail-on-rate 0.05 -o github

  # A simulate scenario that reproduces the hottest object's writers
  kubectl rv conflicts --audit-log audit.log --scenario hot.yaml && kubectl rv simulate run hot.yaml

  # GKE: the last hour of the API server's requests, from Cloud Logging
  gcloud logging read 'protoPayload.serviceName="k8s.io"' --freshness 1h --format json | kubectl rv conflicts --audit-log - --view writers

  # AKS: the last hour of writes and gets, from Log Analytics
  az monitor log-analytics query -w WORKSPACE_ID --analytics-query 'AKSAudit | where TimeGenerated > ago(1h) and Verb in ("create", "update", "patch", "delete", "get")' -o json | kubectl rv conflicts --audit-log -

  # EKS: the last hour's writes, straight from CloudWatch Logs
  AWS_PROFILE=prod kubectl rv conflicts --source cloudwatch:/aws/eks/prod/cluster --since 1h --view writers

  # Events indexed into OpenSearch, or stored in a ClickHouse table, over the last day
  OPENSEARCH_USERNAME=reader OPENSEARCH_PASSWORD=... kubectl rv conflicts --source opensearch:https://logs.example:9200/k8s-audit-* --since 24h
  CLICKHOUSE_USER=reader CLICKHOUSE_PASSWORD=... kubectl rv conflicts --source clickhouse:clickhouse://ch.example:9000/logs/k8s_audit --since 24h

  # Be the API server's audit webhook for ten minutes, keeping what it sent;
  # then give the API server --audit-webhook-config-file webhook.kubeconfig
  kubectl rv conflicts --listen 127.0.0.1:8443 --webhook-kubeconfig webhook.kubeconfig --for 10m --record received.log

  # 409s per second across the cluster, over 30 seconds, from /metrics
  kubectl rv conflicts live --for 30s`

// ConflictsOptions are the options of kubectl rv conflicts.
type ConflictsOptions struct {
	Output    *cmdutil.OutputFlags
	AuditLogs []string
	Sources   []string
	// SourceTimeout and SourcePageSize bound the --source readers.
	SourceTimeout  time.Duration
	SourcePageSize int
	View           string
	Object         string
	FailOnRate     float64
	RetryWindow    time.Duration
	// TimeScopeFlags are --since and --until (o.Since, o.Until).
	cmdutil.TimeScopeFlags
	Strict     bool
	Top        int
	Report     string
	Live       bool
	For        time.Duration
	Scenario   string
	Listen     string
	Resources  []string
	Filter     conflicts.FilterFlags
	ListenCert string
	ListenKey  string
	// WebhookKubeconfig, ListenTokenFile and ListenClientCA are how
	// --listen's senders authenticate (see audit.ListenConfig).
	WebhookKubeconfig string
	ListenTokenFile   string
	ListenClientCA    string
	SpoolMax          string
	Record            string
	RecordAppend      bool

	// load holds --view top and wasted's own flags.
	load      loadOptions
	namespace string
	cfg       conflicts.Config
	// spoolMax is --spool-max in bytes (0: the default).
	spoolMax int64
	// now is the clock --since and --until durations count back from.
	now func() time.Time
	// changed tells which flags were given on the command line (runE's
	// SeeFlags), to refuse the audit-log flags with --live.
	changed func(name string) bool
	// live runs the deprecated --live: conflicts live's options.
	live *LiveOptions
	genericiooptions.IOStreams
}

// NewCmdConflicts returns kubectl rv conflicts.
func NewCmdConflicts(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	def := conflicts.NewConfig()
	o := &ConflictsOptions{Output: cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML, output.GitHub, output.JUnit, output.SARIF), FailOnRate: -1, RetryWindow: def.RetryWindow, IOStreams: streams}
	cmd := &cobra.Command{
		Use:     "conflicts (--audit-log PATH | --source SERVICE:WHAT | --listen ADDR) [--view VIEW]",
		Short:   "Find which writes collide in a cluster, who loses to whom, and why, from audit logs or /metrics",
		Long:    conflictsLong,
		Example: conflictsExample,
		Args:    cobra.NoArgs,
		RunE:    cmdutil.RunE(f, o),
	}
	fs := cmd.Flags()
	o.Output.AddFlags(fs)
	fs.StringArrayVar(&o.AuditLogs, "audit-log", nil, "Audit log to read: a file, a directory of rotated files, a .gz file or - (stdin). Repeatable.")
	fs.StringArrayVar(&o.Sources, "source", nil, "Audit events to read from a log service, the filter pushed down: cloudwatch:LOG_GROUP (EKS's /aws/eks/CLUSTER/cluster; credentials from the AWS SDK's default chain), elasticsearch:URL/INDEX (credentials from ELASTICSEARCH_API_KEY or ELASTICSEARCH_USERNAME/PASSWORD), opensearch:URL/INDEX (OPENSEARCH_USERNAME/PASSWORD) or clickhouse:DSN/TABLE (DSN as clickhouse-go's, clickhouse://HOST:9000/DATABASE; a String column event; CLICKHOUSE_USER/PASSWORD). Repeatable.")
	fs.StringVar(&o.View, "view", "", "What to show: "+strings.Join(views, ", ")+" (default objects, or timeline with --object).")
	fs.StringVar(&o.Object, "object", "", "The only object to analyse, shown as a timeline: TYPE/NAME (-n narrows it to a namespace) or TYPE/NAMESPACE/NAME, with TYPE as kubectl reads it (cm/leader, cm/shop/leader, leases.coordination.k8s.io/x).")
	fs.Float64Var(&o.FailOnRate, "fail-on-rate", o.FailOnRate, "Exit 1 when any writer's conflict rate (409s per attempt, 0 to 1) exceeds this.")
	// Off unless given (Run's -1); a value given is between 0 and 1.
	fs.Lookup("fail-on-rate").DefValue = "off"
	fs.DurationVar(&o.RetryWindow, "retry-window", o.RetryWindow, "How soon after a 409 a writer's next attempt on the object, if it re-read, counts as a retry; otherwise the 409 was a give-up.")
	o.TimeScopeFlags.AddFlags(fs)
	fs.BoolVar(&o.Strict, "strict", false, "Make every skipped line (a blank line, a last line cut short) an error.")
	fs.IntVar(&o.Top, "top", 0, "Show only this many objects and writers, the most 409s first; 0 is all. Not given, a table stops at 20 rows and says how many more there are; -o json|yaml keeps every row.")
	fs.StringVar(&o.Report, "report", "", "Also write a picture of the --object (or the hottest object): writers as lanes over time, 409s, successes and give-ups marked. FILE.svg or FILE.html; with --view top or wasted, FILE.html of the tables.")
	fs.BoolVar(&o.Live, "live", false, "Instead of an audit log, read the API server's /metrics: kubectl rv conflicts live.")
	_ = fs.MarkDeprecated("live", "use kubectl rv conflicts live")
	// pflag says so on the command's stderr, not the process's.
	fs.SetOutput(streams.ErrOut)
	fs.DurationVar(&o.For, "for", 10*time.Second, "With --listen, how long to receive (default: until Ctrl-C).")
	fs.StringArrayVar(&o.Resources, "resource", nil, "Only objects of these types: a type as kubectl names it (cm, deployments.apps) or a pattern over RESOURCE.GROUP (*.apps, *.* for all; core types end in a dot: configmaps.); a leading - excludes (-leases.coordination.k8s.io). Repeatable.")
	fs.StringArrayVar(&o.Filter.Writers, "writer", nil, "Only the attempts of these writers: a user, field manager, pod, writer as the report names it (user/manager@pod) or user agent; * matches any characters, a leading - excludes. Winners and causes still come from every writer. Repeatable.")
	fs.StringArrayVar(&o.Filter.Verbs, "verb", nil, "Only the attempts with these verbs ("+strings.Join(audit.WriteVerbs, ", ")+"; with --view top or wasted any verb, get and list too); a leading - excludes. Repeatable.")
	fs.StringArrayVar(&o.Filter.Subresources, "subresource", nil, "Only the attempts on these subresources (status, scale, *); a leading - excludes (-* keeps the writes to objects themselves). Repeatable.")
	fs.StringArrayVar(&o.Filter.Statuses, "status", nil, "Only the attempts answered with these HTTP statuses: a code (409) or a class (2xx); a leading - excludes. Repeatable.")
	fs.StringVar(&o.Listen, "listen", "", "Instead of an audit log, receive the API server's audit webhook on ADDR (HOST:PORT), over TLS, until --for or Ctrl-C, then report. Senders must authenticate: give --webhook-kubeconfig, --listen-token-file or --listen-client-ca.")
	fs.StringVar(&o.WebhookKubeconfig, "webhook-kubeconfig", "", "With --listen: write FILE (new, mode 0600) for the API server's --audit-webhook-config-file, holding the URL, a new random token and the CA.")
	fs.StringVar(&o.ListenTokenFile, "listen-token-file", "", "With --listen: senders must send the bearer token in FILE (at least 16 characters).")
	fs.StringVar(&o.ListenClientCA, "listen-client-ca", "", "With --listen: senders must present a client certificate signed by a CA in FILE (PEM).")
	fs.StringVar(&o.ListenCert, "listen-cert", "", "With --listen: serve TLS with this certificate (PEM) instead of one made for ADDR.")
	fs.StringVar(&o.ListenKey, "listen-key", "", "With --listen: the certificate's private key (PEM).")
	fs.StringVar(&o.SpoolMax, "spool-max", "", "With --listen: the most disk the copy of the events for a second reading takes (default 1Gi); past it, events older than 2s behind the newest are dropped and counted.")
	fs.StringVar(&o.Record, "record", "", "With --listen: also write the events received to FILE (new, mode 0600) as an audit log that --audit-log reads back. It holds what the audit policy logs: request bodies and Secret data at the Request level.")
	fs.BoolVar(&o.RecordAppend, "record-append", false, "With --record: append to an existing file (mode 0600) instead of refusing it.")
	fs.StringVar(&o.Scenario, "scenario", "", "Also write a kubectl rv simulate scenario (FILE.yaml) that reproduces the contention on the --object (or the hottest object): its writers, their rates and write methods.")
	_ = cmd.RegisterFlagCompletionFunc("writer", writerCompletion)
	_ = cmd.RegisterFlagCompletionFunc("verb", cobra.FixedCompletions(audit.WriteVerbs, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("subresource", cobra.FixedCompletions([]string{"status", "scale", "-*"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions([]string{"409", "2xx", "4xx", "-409"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("view", cobra.FixedCompletions(views, cobra.ShellCompDirectiveNoFileComp))
	o.load.addFlags(cmd, fs)
	fs.DurationVar(&o.SourceTimeout, "source-timeout", audit.DefaultSourceTimeout, "With --source: the longest a log service may go without sending a byte (to start answering, or between two reads of an answer) before the read fails; one page may take at most 4 times this in all. Raise it for a service slow to answer.")
	fs.IntVar(&o.SourcePageSize, "source-page-size", 0, "With --source: events asked for per page (0: the service's default, 5000 or 10000; at most 10000). Lower it when an answer is over the 64 MiB cap.")
	_ = cmd.RegisterFlagCompletionFunc("source", cobra.FixedCompletions([]string{audit.CloudWatchScheme + "/aws/eks/", audit.ElasticsearchScheme + "https://", audit.OpenSearchScheme + "https://", audit.ClickHouseScheme + "clickhouse://"}, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
	cmd.AddCommand(NewCmdConflictsLive(f, streams))
	return cmd
}

// Complete reads the namespace (-n) for --object; only --live contacts
// the cluster, and only in Run.
// SeeFlags records which flags were set: --for and -n mean something
// only when given.
func (o *ConflictsOptions) SeeFlags(changed func(string) bool) { o.changed = changed }

// set reports whether flag name was given.
func (o *ConflictsOptions) set(name string) bool { return o.changed != nil && o.changed(name) }

func (o *ConflictsOptions) Complete(f *cmdutil.Factory, _ []string) error {
	if o.Live {
		o.live = &LiveOptions{Output: o.Output, For: o.For, name: "--live", factory: f, IOStreams: o.IOStreams}
		return nil
	}
	if o.Object == "" && !o.set("namespace") {
		return nil
	}
	ns, explicit, err := f.Namespace()
	if err != nil {
		return err
	}
	if explicit {
		o.namespace = ns
	}
	return nil
}

// forbiddenBody returns err with the message the API server's 403 body
// carries (a Status in JSON, or text), when client-go gave none.
func forbiddenBody(err error, body []byte) error {
	var st metav1.Status
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		msg = st.Message
	}
	if msg == "" {
		return err
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: msg,
	}}
}

// auditFlags are the flags that only an audit log analysis reads:
// --listen's own among them.
var auditFlags = slices.Concat(listenFlags, []string{"audit-log", "source", "source-timeout", "source-page-size", "view", "object", "resource", "writer", "verb", "subresource", "status", "fail-on-rate", "retry-window", "since", "until", "strict", "top", "report", "scenario", "listen"}, topFlags)

// Validate checks the flags without I/O and builds the engine's config.
func (o *ConflictsOptions) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	if o.Live {
		return o.validateLive()
	}
	if err := cmdutil.ValidateReport(o.Report); err != nil {
		return err
	}
	if err := o.validateListen(); err != nil {
		return err
	}
	if err := o.validateSources(); err != nil {
		return err
	}
	cfg := conflicts.NewConfig()
	switch {
	case len(o.AuditLogs) == 0 && len(o.Sources) == 0 && o.Listen == "":
		return exitcode.Usagef("give --audit-log PATH (the API server's --audit-log-path file, a directory of them, or - for stdin), --source SERVICE:WHAT (cloudwatch:, elasticsearch:, opensearch:, clickhouse:) or --listen ADDR (its audit webhook)")
	case o.View != "" && !slices.Contains(views, o.View):
		return exitcode.Usagef("--view %q is not a view: use one of %s", o.View, strings.Join(views, ", "))
	case o.View == conflictsprint.ViewTimeline && o.Object == "":
		return exitcode.Usagef("--view timeline needs --object TYPE/NAME")
	case o.FailOnRate > 1 || o.set("fail-on-rate") && o.FailOnRate < 0:
		return exitcode.Usagef("--fail-on-rate is a fraction of attempts between 0 and 1, got %g", o.FailOnRate)
	case o.RetryWindow <= 0:
		return exitcode.Usagef("--retry-window must be positive, got %s", o.RetryWindow)
	case o.Top < 0:
		return exitcode.Usagef("--top must be 0 or positive, got %d", o.Top)
	case cmdutil.CountOf(o.AuditLogs, "-") > 1:
		return exitcode.Usagef("--audit-log - (stdin) can be given only once")
	case o.Scenario != "" && !strings.HasSuffix(o.Scenario, ".yaml") && !strings.HasSuffix(o.Scenario, ".yml"):
		return exitcode.Usagef("--scenario %q: give a file name ending in .yaml", o.Scenario)
	case o.Scenario != "" && cmdutil.CountOf(o.AuditLogs, "-") > 0:
		return exitcode.Usagef("--scenario reads the log a second time for the write methods: give --audit-log a file, not - (stdin)")
	}
	var err error
	if cfg.Window, err = o.ToWindow(o.now); err != nil {
		return err
	}
	if o.Object != "" {
		on, err := apitypes.ParseObjectName(o.Object)
		if err == nil {
			on, err = on.InNamespace(o.namespace)
		}
		if err != nil {
			return exitcode.Usagef("--object %w", err)
		}
		cfg.Object = &conflicts.ObjectKey{Resource: strings.ToLower(on.Type), Namespace: on.Namespace, Name: on.Name}
	}
	cfg.Namespace = o.namespace
	o.Filter.AnyVerb = o.loadView()
	if cfg.Filter, err = conflicts.ParseFilter(o.Filter); err != nil {
		return exitcode.Usagef("%w", err)
	}
	if cfg.Filter != nil && o.Scenario != "" {
		return exitcode.Usagef("--scenario replays every writer of the object: give it without --writer, --verb, --subresource and --status")
	}
	if cfg.Resources, err = apitypes.ParseResourceFilter(o.Resources); err != nil {
		return exitcode.Usagef("--resource %w", err)
	}
	cfg.RetryWindow, cfg.Strict, cfg.HottestTimeline = o.RetryWindow, o.Strict, o.Report != "" || o.Scenario != ""
	// A CI report's findings are the 409s per cause, object and writer.
	cfg.CauseObjects = o.Output.Format().CI()
	if o.Listen != "" && cfg.MemoryLimit > 0 {
		// The receiver's queue is memory beside the analysis's, not in it.
		cfg.MemoryLimit += audit.ListenMemory
	}
	o.cfg = cfg
	return o.validateLoad()
}

// validateLive refuses the audit-log flags with --live: the two read
// different sources and answer different questions.
func (o *ConflictsOptions) validateLive() error {
	for _, name := range auditFlags {
		if o.set(name) {
			return exitcode.Usagef("--live and --%s cannot be used together: --live reads the API server's /metrics, --%s is for an audit log", name, name)
		}
	}
	if o.For <= 0 {
		return exitcode.Usagef("--for must be positive, got %s", o.For)
	}
	if f := o.Output.Format(); f.CI() {
		return exitcode.Usagef("--live and -o %s cannot be used together: --live counts 409s per second from /metrics, which names no cause, object or writer to report; give -o %s --audit-log PATH (or --source, --listen) instead", f, f)
	}
	return nil
}

// Run reads the logs, prints the view and maps the rates to an exit code;
// with --live it reads /metrics instead.
func (o *ConflictsOptions) Run(ctx context.Context) error {
	if o.Live {
		return o.live.Run(ctx)
	}
	if o.loadView() {
		// Go's own pacing: the counting's live heap, its groups and
		// pairs, is above conflicts' limit on a large log, where a limit
		// would collect all the time.
		return o.runLoad(ctx)
	}
	// The report is printed within the memory limit of the analysis.
	defer conflicts.LimitMemory(o.cfg.MemoryLimit)()
	var res *conflicts.Result
	err := o.analyse(ctx, func(ctx context.Context, sources []audit.Source) (err error) {
		res, err = conflicts.Run(ctx, sources, conflicts.Job{Config: o.cfg, Scenario: o.Scenario, Origin: o.AuditLogs,
			ObjectName: o.Object, FailOnRate: o.FailOnRate})
		return err
	})
	switch {
	case errors.Is(err, audit.ErrBadInput):
		return exitcode.Usage(err)
	case errors.Is(err, conflicts.ErrNoContention):
		what := "the logs"
		if o.Object != "" {
			what = o.Object
		}
		return exitcode.Usagef("--scenario: %s: %w", what, err)
	case err != nil:
		return err
	}
	for _, n := range res.Notes {
		output.Warnf(o.ErrOut, "%s", n)
	}
	if err := o.print(res); err != nil {
		return err
	}
	if err := o.writeReport(res.Report); err != nil {
		return err
	}
	if res.Scenario != nil {
		if err := os.WriteFile(o.Scenario, res.Scenario, 0o644); err != nil {
			return exitcode.Usage(fmt.Errorf("--scenario: %w", err))
		}
	}
	if len(res.OverRate) > 0 {
		return exitcode.Findingf("%d writer(s) over --fail-on-rate %g: %s", len(res.OverRate), o.FailOnRate, text.Escape(strings.Join(res.OverRate, ", ")))
	}
	return nil
}

// analyse opens the sources (with --listen, receiving until --for or
// Ctrl-C) and runs analyse over them: Ctrl-C ends the receiving, not the
// analysis of what came.
func (o *ConflictsOptions) analyse(ctx context.Context, analyse func(context.Context, []audit.Source) error) error {
	sources, done, err := o.sources(ctx)
	if err != nil {
		return err
	}
	if o.Listen != "" {
		ctx = context.WithoutCancel(ctx)
	}
	err = analyse(ctx, sources)
	if derr := done(); err == nil {
		err = derr
	}
	return err
}

func (o *ConflictsOptions) print(res *conflicts.Result) error {
	rep := res.Report
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	if f := o.Output.Format(); f.CI() {
		// Every object and writer: a CI report is read by a program.
		return conflictsprint.PrintCI(o.Out, f, rep, conflictsprint.CI{Tool: cmdutil.CITool(), Fails: res.Over})
	}
	// A table stops at a screenful unless --top says otherwise; -o json
	// and yaml, read by programs, keep every row.
	top := o.Top
	if !o.set("top") && !p.Structured() {
		top = conflictsprint.DefaultTop
	}
	if p.Structured() {
		scope := conflictsprint.Scope{AuditLogs: append(slices.Clip(o.AuditLogs), o.Sources...), Since: o.Since, Until: o.Until, RetryWindow: o.RetryWindow.String(), Object: o.Object}
		return p.PrintObject(conflictsprint.NewDocument(rep, scope, top))
	}
	view := o.View
	if view == "" && o.Object != "" {
		view = conflictsprint.ViewTimeline
	}
	return conflictsprint.Print(p, rep, view, top)
}

func (o *ConflictsOptions) writeReport(rep *conflicts.Report) error {
	return cmdutil.WriteReport(o.Report, func() []byte { return conflictsprint.SVG(rep) }, func() []byte { return conflictsprint.HTML(rep) })
}

// writerCompletion completes --writer with the users and field managers
// of the first writes of the --audit-log files given before it (not
// stdin, which completion cannot read).
func writerCompletion(c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	logs, _ := c.Flags().GetStringArray("audit-log")
	var sources []audit.Source
	for _, l := range logs {
		if l == "-" {
			continue
		}
		if s, err := audit.Open(l, nil); err == nil {
			sources = append(sources, s...)
		}
	}
	var out []cobra.Completion
	for _, name := range conflicts.WriterNames(c.Context(), sources, writerCompletionEvents) {
		if strings.HasPrefix(name, toComplete) {
			out = append(out, name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// writerCompletionEvents is how many writes writerCompletion reads: a few
// MB of a log, a fraction of a second.
const writerCompletionEvents = 20000
