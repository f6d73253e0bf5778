package leases

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/findings"
	"github.com/kubectl-rv/kubectl-rv/pkg/leases"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/leasesprint"
)

const leasesLong = `Leader election seen from outside: who leads, how healthy its renewals
are, every takeover, and former leaders that keep acting after they lost.

Without --watch, --for or --audit-log, one look: every Lease (and legacy
annotation lock on Endpoints and ConfigMaps) with its holder, how long it
has held it, its last renewal's age against leaseDurationSeconds (the
slack), its transitions, and the LeaseCandidates that compete for it when
the cluster serves that API (coordinated leader election, 1.33+).

--watch (until Ctrl-C) or --for DURATION watches the Leases and records each
renewal: the interval's median and p99, the smallest slack seen, late
renewals (slack under a third of the duration), expiries and takeovers (a
new holderIdentity; "after expiry" when the previous holder's renewTime
plus the duration had passed). After a 410 Gone the Leases are relisted,
the gap is reported and the watch resumes.

--audit-log tells the same story from the past, from the Lease writes in an
API server's audit log (holders named as kubectl rv conflicts names writers,
the duration given by --lease-duration), and lists the writes of a former
holder to other objects after it lost the lock: the window in which two
replicas acted as leader. Only the holder's own identity counts; one that
several clients share (as conflicts marks them) proves nothing and is
listed apart.

Without -A, the current namespace (-n) is looked at; with --audit-log, every
namespace unless -n is given. Exit status: 0, or 1 when --fail-on matches, 2
on bad usage or a bad audit log, 3 when the cluster cannot be reached.

Docs: docs/leases.md`

const leasesExample = `  # Who leads, in every namespace, now
  kubectl rv leases -A

  # The control plane's Leases for two minutes: renewals, late renewals, takeovers
  kubectl rv leases -n kube-system --for 2m

  # One Lease until Ctrl-C, as a timeline of who held it when
  kubectl rv leases my-operator-lock -n operators --watch --view timeline

  # The history of every Lease in an audit log, and leaders that kept acting
  kubectl rv leases --audit-log /var/log/kubernetes/audit.log --lease-duration 15s

  # Five minutes of that history, as conflicts --since and --until scope a log
  kubectl rv leases --audit-log audit.log --since 2026-11-24T10:00:00Z --until 2026-11-24T10:05:00Z

  # The same history as a picture: lanes per holder, takeovers, expiries, acting windows
  kubectl rv leases --audit-log audit.log --report leases.html

  # In CI: fail when a leader lost its Lease or acted after losing it
  kubectl rv leases --audit-log e2e-audit.log --fail-on any -o json

  # The same, as annotations per takeover and acting window (GitHub Actions); -o junit and -o sarif for reports
  kubectl rv leases --audit-log e2e-audit.log --fail-on any -o github`

// LeasesOptions are the options of kubectl rv leases.
type LeasesOptions struct {
	Output        *cmdutil.OutputFlags
	AllNamespaces bool
	Watch         bool
	For           time.Duration
	AuditLogs     []string
	LeaseDuration time.Duration
	// TimeScopeFlags are --since and --until (with --audit-log).
	cmdutil.TimeScopeFlags
	View   string
	FailOn string
	failOn findings.Policy
	Report string

	names     []string
	namespace string
	window    audit.Window
	// now is the clock --since and --until durations count back from.
	now     func() time.Time
	clients leases.Clients
	// findCandidates returns the LeaseCandidate resource the cluster
	// serves (nil for none).
	findCandidates func() (*schema.GroupVersionResource, error)
	genericiooptions.IOStreams
}

// NewCmdLeases returns kubectl rv leases.
func NewCmdLeases(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &LeasesOptions{
		Output:        cmdutil.NewOutputFlags(output.Table, output.JSON, output.YAML, output.GitHub, output.JUnit, output.SARIF),
		LeaseDuration: leases.NewConfig().LeaseDuration,
		View:          string(leasesprint.ViewTable),
		IOStreams:     streams,
	}
	cmd := &cobra.Command{
		Use:     "leases [NAME...] [-n NAMESPACE | -A] [--watch | --for DURATION | --audit-log PATH]",
		Short:   "Who leads, renewal health, takeovers and leaders that act after losing, from Leases or audit logs",
		Long:    leasesLong,
		Example: leasesExample,
		// The names of the Leases in the namespace (-n, or every one with -A).
		ValidArgsFunction: cmdutil.ResourceNameCompletion(f, "leases.coordination.k8s.io"),
		RunE:              cmdutil.RunE(f, o),
	}
	fs := cmd.Flags()
	o.Output.AddFlags(fs)
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Look at every namespace (-n is ignored).")
	fs.BoolVarP(&o.Watch, "watch", "w", false, "Watch the Leases until Ctrl-C and report their renewals and takeovers.")
	fs.DurationVar(&o.For, "for", 0, "Watch the Leases for this long, then report (implies --watch).")
	fs.StringArrayVar(&o.AuditLogs, "audit-log", nil, "Read the Lease writes of this audit log instead of the cluster: a file, a directory of rotated files, a .gz file or - (stdin). Repeatable.")
	fs.DurationVar(&o.LeaseDuration, "lease-duration", o.LeaseDuration, "With --audit-log: the Leases' duration (a Metadata-level log has no bodies). client-go's default is 15s.")
	o.TimeScopeFlags.AddFlags(fs)
	fs.StringVar(&o.View, "view", o.View, "What the table output shows: table (the locks, takeovers, expiries, acting windows) or timeline (who held each lock when, and the notable moments).")
	cmdutil.AddFailOnFlag(fs, &o.FailOn, leases.Findings, "")
	fs.StringVar(&o.Report, "report", "", "Also write a picture of who held each lock when (watch or history): lanes per holder, takeovers, expiries, acting-while-not-leader windows. FILE.svg or FILE.html.")
	cmdutil.SetFlagValues(fs, "view", leasesprint.Views...)
	_ = cmd.RegisterFlagCompletionFunc("view", cobra.FixedCompletions(leasesprint.Views, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("audit-log", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveDefault
	})
	_ = cmd.RegisterFlagCompletionFunc("report", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"svg", "html"}, cobra.ShellCompDirectiveFilterFileExt
	})
	return cmd
}

// history says whether the report is read from audit logs.
func (o *LeasesOptions) history() bool { return len(o.AuditLogs) > 0 }

// watching says whether the Leases are watched.
func (o *LeasesOptions) watching() bool { return o.Watch || o.For > 0 }

// Complete resolves the namespace and, unless an audit log is read, the
// clients.
func (o *LeasesOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.names = args
	if !o.AllNamespaces {
		ns, explicit, err := f.Namespace()
		if err != nil {
			return err
		}
		if explicit || !o.history() {
			o.namespace = ns
		}
	}
	if o.history() {
		return nil
	}
	// Endpoints are listed only for their annotation locks: the server's
	// deprecation warning about them is no news to the user, who names no
	// types here and could not act on it, so it is dropped.
	f.DropWarningsOutside([]schema.GroupResource{leases.LeaseResource.GroupResource(), leases.ConfigMapResource.GroupResource(),
		{Group: "coordination.k8s.io", Resource: "leasecandidates"}})
	cfg, err := f.RESTConfig(0, 0)
	if err != nil {
		return err
	}
	if o.clients.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	if o.clients.Metadata, err = metadata.NewForConfig(cfg); err != nil {
		return err
	}
	o.findCandidates = func() (*schema.GroupVersionResource, error) {
		d, err := f.Discovery()
		if err != nil {
			return nil, err
		}
		return leases.FindCandidateResource(d)
	}
	return nil
}

// Validate checks the flags without I/O.
func (o *LeasesOptions) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	var err error
	if o.failOn, err = leases.Findings.Parse("--fail-on", o.FailOn); err != nil {
		return err
	}
	switch {
	case o.For < 0:
		return exitcode.Usagef("--for must be positive, got %s", o.For)
	case o.history() && o.watching():
		return exitcode.Usagef("--audit-log and --watch/--for cannot be used together: --audit-log reads the past from a log, --watch and --for watch the cluster")
	case o.LeaseDuration <= 0:
		return exitcode.Usagef("--lease-duration must be positive, got %s", o.LeaseDuration)
	case !slices.Contains(leasesprint.Views, o.View):
		return exitcode.Usagef("--view %q: use table or timeline", o.View)
	case !o.failOn.None() && !o.history() && !o.watching():
		return exitcode.Usagef("--fail-on needs a history to judge: add --for DURATION, --watch or --audit-log PATH")
	case o.Output.Format().CI() && !o.history() && !o.watching():
		return exitcode.Usagef("-o %s reports a history's findings, which one look has none of: add --for DURATION, --watch or --audit-log PATH", o.Output.Format())
	case slices.Contains(strings.Split(o.FailOn, ","), "split-brain") && !o.history():
		return exitcode.Usagef("--fail-on split-brain needs --audit-log: only the audit log shows a former leader's writes")
	case o.Report != "" && !o.history() && !o.watching():
		return exitcode.Usagef("--report draws a history: add --for DURATION, --watch or --audit-log PATH")
	case cmdutil.CountOf(o.AuditLogs, "-") > 1:
		return exitcode.Usagef("--audit-log - (stdin) can be given only once")
	case (o.Since != "" || o.Until != "") && !o.history():
		return exitcode.Usagef("--since and --until scope an audit log: add --audit-log PATH")
	}
	if o.window, err = o.ToWindow(o.now); err != nil {
		return err
	}
	return cmdutil.ValidateReport(o.Report)
}

func (o *LeasesOptions) config() leases.Config {
	cfg := leases.NewConfig()
	cfg.Namespace, cfg.Names, cfg.LeaseDuration, cfg.Window = o.namespace, o.names, o.LeaseDuration, o.window
	cfg.Stream.Now = func() time.Time { return time.Now().UTC() }
	cfg.Warnf = cmdutil.SyncWarnf(o.ErrOut)
	return cfg
}

// Run looks, watches or reads the audit logs, prints the report and maps
// it to an exit code.
func (o *LeasesOptions) Run(ctx context.Context) error {
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	cfg, err := o.engineConfig()
	if err != nil {
		return err
	}
	view := leasesprint.View(o.View)
	runCtx, stop := ctx, func() {}
	if o.watching() {
		runCtx, stop = o.watchFor(ctx, &cfg, p, view)
	}
	rep, err := leases.Run(runCtx, o.clients, cfg)
	stop()
	if errors.Is(err, audit.ErrBadInput) {
		return exitcode.Usage(err)
	}
	if err != nil {
		return err
	}
	if len(rep.Locks) == 0 && !p.Structured() {
		fmt.Fprintln(o.ErrOut, o.nothing())
	}
	scope := leasesprint.Scope{Namespace: o.namespace, Names: o.names, AuditLogs: o.AuditLogs, Since: o.Since, Until: o.Until}
	switch f := o.Output.Format(); {
	case f.CI():
		err = leasesprint.PrintCI(o.Out, f, rep, leasesprint.CI{Tool: cmdutil.CITool(), Fails: o.failOn.Fails})
	case p.Structured():
		err = p.PrintObject(leasesprint.NewDocument(rep, scope))
	default:
		err = leasesprint.Print(p, rep, view)
	}
	if err != nil {
		return err
	}
	if err := cmdutil.WriteReport(o.Report, func() []byte { return leasesprint.SVG(rep) }, func() []byte { return leasesprint.HTML(rep) }); err != nil {
		return err
	}
	return o.exit(rep)
}

func (o *LeasesOptions) nothing() string {
	where := "in namespace " + o.namespace
	if o.namespace == "" {
		where = "in any namespace"
	}
	if o.history() {
		return "No Lease writes found " + where + " in the audit log."
	}
	return "No leases found " + where + "."
}

// engineConfig is the engine's configuration: the audit logs opened, or
// the cluster's LeaseCandidate resource found.
func (o *LeasesOptions) engineConfig() (leases.Config, error) {
	cfg := o.config()
	if o.history() {
		for _, path := range o.AuditLogs {
			s, err := audit.Open(path, o.In)
			if err != nil {
				return cfg, exitcode.Usage(err)
			}
			cfg.Audit = append(cfg.Audit, s...)
		}
		return cfg, nil
	}
	cfg.Watch = o.watching()
	var err error
	cfg.CandidateResource, err = o.findCandidates()
	return cfg, err
}

// watchFor bounds the watch by --for, says what is watched until when and,
// on a terminal, redraws the report so far in place, as top does; stop
// clears the view and releases the bound.
func (o *LeasesOptions) watchFor(ctx context.Context, cfg *leases.Config, p *output.Printer, view leasesprint.View) (context.Context, func()) {
	until, cancel := "Ctrl-C", context.CancelFunc(func() {})
	if o.For > 0 {
		ctx, cancel = context.WithTimeout(ctx, o.For)
		until = o.For.String()
	}
	where := "namespace " + o.namespace
	if o.namespace == "" {
		where = "every namespace"
	}
	fmt.Fprintf(o.ErrOut, "Watching the Leases of %s until %s...\n", where, until)
	// A CI format is the report at the end only.
	live := output.NewLiveView(o.Out, !p.Structured() && !o.Output.Format().CI() && output.IsTerminal(o.Out))
	if live.Live() {
		cfg.Live = func(r *leases.Report) { _ = live.Redraw(func() error { return leasesprint.Print(p, r, view) }) }
	}
	return ctx, func() { live.Clear(); cancel() }
}

// exit maps the report to --fail-on's verdict.
func (o *LeasesOptions) exit(rep *leases.Report) error {
	return o.failOn.Exit(leases.Findings, rep.Findings())
}
