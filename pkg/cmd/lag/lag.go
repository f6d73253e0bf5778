package lag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/lag"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/lagprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

const lagLong = `Show which objects' controllers have not caught up with the latest spec.

For every object in scope, lag compares metadata.generation with
status.observedGeneration and with the observedGeneration of each status
condition. STATE is current, lagging, never-observed (a generation but no
observedGeneration anywhere: kstatus-based tools call such objects Current) or
no-generation. AGE is how long the newest spec has been waiting; OBSERVER is
the manager that writes the status.

--for rollout also requires each object to be rolled out, as kubectl rollout
status decides for Deployments, StatefulSets and DaemonSets, and as the Ready,
Reconciling, Stalled and Progressing conditions say for other kinds: STATE
rolling-out, paused (spec.paused: --wait waits) or stalled (its progress
deadline passed: --wait fails at once, naming the condition). The default,
--for generation, checks observedGeneration only.

Without TYPE, the scope is every served type whose objects can report an
observedGeneration (the built-in workloads, Pods, ... and every custom
resource type), from discovery; cluster-scoped types with --all-namespaces.
A type you may not list is skipped with a warning (partial results).

Exit status: 0 when nothing lags, 1 when an object lags (beyond --max-lag,
for longer than --min-age) or is not rolled out, 2 on bad usage, 3 when the
cluster cannot be reached or refuses every list. With --wait, lag watches
(it does not poll) until nothing lags or --timeout expires, then lists what
still lags.

Docs: docs/lag.md`

const lagExample = `  # Everything lagging in the current namespace
  kubectl rv lag

  # Across the cluster, including cluster-scoped types
  kubectl rv lag -A

  # Only Deployments and StatefulSets labelled app=web, with current ones too
  kubectl rv lag deployments,statefulsets -l app=web --all

  # CI gate: wait until every controller has caught up, at most two minutes
  kubectl rv lag -A --wait --timeout 2m

  # CI gate: wait until every workload in the namespace is rolled out
  kubectl rv lag -n shop --wait --for rollout --timeout 5m

  # The same, what still waits at the end as annotations (GitHub Actions); -o junit and -o sarif for reports
  kubectl rv lag -n shop --wait --for rollout --timeout 5m -o github

  # Only lag of more than one generation that has lasted five minutes
  kubectl rv lag -A --max-lag 1 --min-age 5m

  # A live view while controllers catch up
  kubectl rv lag deployments --watch

  # Machine-readable, from the API server's cache
  kubectl rv lag -A --cache -o json`

// The client rate limit of a scan: a few hundred pages must not wait on
// kubectl's default of 5 requests per second.
const (
	lagQPS   = 50
	lagBurst = 100
)

// LagOptions are the options of kubectl rv lag.
type LagOptions struct {
	Selection   *cmdutil.SelectionFlags
	Output      *cmdutil.OutputFlags
	All         bool
	MaxLag      int64
	MinAge      time.Duration
	Wait        bool
	Watch       bool
	For         string
	Timeout     time.Duration
	FromCache   bool
	Concurrency int

	timeoutSet bool
	goal       lag.Goal
	namespace  string
	client     lag.Client
	// resolve returns the types to scan (discovery, or the TYPE arguments).
	resolve func() ([]lag.Target, []string, error)
	now     func() time.Time
	genericiooptions.IOStreams
}

// NewCmdLag returns kubectl rv lag.
func NewCmdLag(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &LagOptions{
		Selection:   cmdutil.NewSelectionFlags(false),
		Output:      cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML, output.GitHub, output.JUnit, output.SARIF),
		Timeout:     5 * time.Minute,
		For:         forGeneration,
		Concurrency: lag.DefaultConcurrency,
		IOStreams:   streams,
	}
	cmd := &cobra.Command{
		Use:               "lag [TYPE[,TYPE...]]",
		Short:             "Show objects whose controllers have not caught up with the latest spec",
		Long:              lagLong,
		Example:           lagExample,
		ValidArgsFunction: cmdutil.LagTypeCompletion(f),
		RunE:              cmdutil.RunE(f, o),
	}
	fs := cmd.Flags()
	o.Selection.AddFlags(fs)
	o.Output.AddFlags(fs)
	fs.BoolVar(&o.All, "all", false, "Include current and no-generation objects in the table.")
	fs.Int64Var(&o.MaxLag, "max-lag", 0, "Count an object as lagging only when generation minus observedGeneration is greater than this.")
	fs.DurationVar(&o.MinAge, "min-age", 0, "Count an object as lagging only when its newest spec has waited at least this long (e.g. 30s, 5m).")
	fs.BoolVar(&o.Wait, "wait", false, "Watch until nothing lags, then exit 0; exit 1 listing what still lags when --timeout expires.")
	fs.BoolVarP(&o.Watch, "watch", "w", false, "Keep a live view, updated as controllers catch up, until Ctrl-C or --timeout; then exit 1 if objects lag.")
	fs.StringVar(&o.For, "for", o.For, "What counts as done: generation (every observedGeneration has caught up) or rollout (also rolled out, as kubectl rollout status decides).")
	cmdutil.SetFlagValues(fs, "for", forGeneration, forRollout)
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long --wait waits (0: no limit); with --watch, how long to watch.")
	fs.BoolVar(&o.FromCache, "cache", false, "Read from the API server's watch cache (resourceVersion=0): lighter on etcd, may be a moment stale.")
	fs.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "How many types to list at once.")
	return cmd
}

func (o *LagOptions) SeeFlags(changed func(string) bool) { o.timeoutSet = changed("timeout") }

// The values of --for.
const (
	forGeneration = "generation"
	forRollout    = "rollout"
)

// Complete resolves the namespace, the client and the types.
func (o *LagOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.Selection.Args = args
	o.now = time.Now
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	if !o.Selection.AllNamespaces {
		o.namespace = ns
	}
	cfg, err := f.RESTConfig(lagQPS, lagBurst)
	if err != nil {
		return err
	}
	if o.client, err = lag.NewClient(cfg); err != nil {
		return err
	}
	o.resolve = func() ([]lag.Target, []string, error) {
		if len(args) == 0 {
			d, err := f.Discovery()
			if err != nil {
				return nil, nil, err
			}
			return lag.Discover(d, o.Selection.AllNamespaces)
		}
		m, err := f.Mapper()
		if err != nil {
			return nil, nil, err
		}
		ts, err := lagResolveTypes(m, lagTypeArgs(args))
		return ts, nil, err
	}
	return nil
}

// typeArgs splits TYPE[,TYPE...] arguments.
func lagTypeArgs(args []string) []string {
	var out []string
	for _, a := range args {
		for _, t := range strings.Split(a, ",") {
			out = append(out, strings.TrimSpace(t))
		}
	}
	return out
}

func lagResolveTypes(m meta.RESTMapper, names []string) ([]lag.Target, error) {
	var out []lag.Target
	seen := map[schema.GroupVersionResource]bool{}
	for _, n := range names {
		mapping, err := cmdutil.ResolveType(m, n)
		if err != nil {
			return nil, err
		}
		if !seen[mapping.Resource] {
			seen[mapping.Resource] = true
			out = append(out, lag.NewTarget(mapping.Resource, mapping.GroupVersionKind.Kind, mapping.Scope.Name() == meta.RESTScopeNameNamespace))
		}
	}
	lag.SortTargets(out)
	return out, nil
}

// Validate checks the flags without I/O.
func (o *LagOptions) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	for _, a := range lagTypeArgs(o.Selection.Args) {
		switch {
		case a == "":
			return exitcode.Usagef("empty resource type in %q: give TYPE[,TYPE...]", strings.Join(o.Selection.Args, " "))
		case strings.Contains(a, "/"):
			return exitcode.Usagef("%q: lag takes resource types, not TYPE/NAME; select objects with -l or --field-selector metadata.name=NAME", a)
		}
	}
	if err := cmdutil.CheckChunkSize(o.Selection.ChunkSize); err != nil {
		return err
	}
	if err := cmp.Or(cmdutil.ZeroOrPositive("--max-lag", o.MaxLag, ""),
		cmdutil.ZeroOrPositive("--min-age", o.MinAge, ""),
		cmdutil.ZeroOrPositive("--timeout", o.Timeout, "no limit"),
		cmdutil.AtLeast("--concurrency", o.Concurrency, 1)); err != nil {
		return err
	}
	switch o.For {
	case forGeneration:
		o.goal = lag.ObservedGeneration
	case forRollout:
		o.goal = lag.RolledOut
	default:
		return exitcode.Usagef("--for %q is not supported: use one of %s, %s", o.For, forGeneration, forRollout)
	}
	switch {
	case o.Wait && o.Watch:
		return exitcode.Usagef("--wait and --watch cannot be combined: --wait gates, --watch shows")
	case o.timeoutSet && !o.Wait && !o.Watch:
		return exitcode.Usagef("--timeout needs --wait or --watch (for the request timeout use --request-timeout)")
	case o.Watch && o.Output.Format().CI():
		return exitcode.Usagef("-o %s cannot be combined with --watch: a CI report is written once, when the command ends; use --wait to gate on the final state", o.Output.Format())
	}
	return nil
}

func (o *LagOptions) config() lag.Config {
	cfg := lag.NewConfig()
	cfg.Namespace = o.namespace
	cfg.LabelSelector = o.Selection.LabelSelector
	cfg.FieldSelector = o.Selection.FieldSelector
	cfg.ChunkSize = o.Selection.ChunkSize
	cfg.Concurrency = o.Concurrency
	cfg.FromCache = o.FromCache
	cfg.MaxLag = o.MaxLag
	cfg.MinAge = o.MinAge
	cfg.All = o.All
	cfg.For = o.goal
	cfg.Now = o.now
	cfg.Warnf = func(format string, args ...any) { output.Warnf(o.ErrOut, format, args...) }
	if output.IsTerminal(o.ErrOut) {
		line := output.NewStatusLine(o.ErrOut)
		cfg.Progress = func(p lag.ScanProgress) {
			if p.Done {
				line.Clear()
				return
			}
			line.Set(fmt.Sprintf("scanning: %d/%d types, %d objects", p.TypesDone, p.Types, p.Objects))
		}
	}
	return cfg
}

func (o *LagOptions) scope(targets []lag.Target) lagprint.Scope {
	s := lagprint.Scope{
		Namespace: o.namespace, AllNamespaces: o.Selection.AllNamespaces,
		LabelSelector: o.Selection.LabelSelector, FieldSelector: o.Selection.FieldSelector,
		FromCache: o.FromCache, MaxLag: o.MaxLag, MinAge: o.MinAge.String(), For: o.For, Types: []string{},
	}
	for _, t := range targets {
		s.Types = append(s.Types, t.Name())
	}
	return s
}

// Run scans, then waits or watches when asked, and prints the report.
func (o *LagOptions) Run(ctx context.Context) error {
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	targets, warnings, err := o.resolve()
	for _, w := range warnings {
		output.Warnf(o.ErrOut, "%s", w)
	}
	if err != nil {
		if errors.Is(err, lag.ErrNoTypes) {
			fmt.Fprintln(o.ErrOut, "nothing to check: "+text.Escape(err.Error()))
			return nil
		}
		return err
	}
	scope := o.scope(targets)
	popts := lagprint.Options{ShowNamespace: o.Selection.AllNamespaces}
	if o.Output.NoHeaders {
		popts.Notes = o.ErrOut
	}
	cfg := o.config()
	switch {
	case o.Wait:
		cfg.Mode, cfg.Timeout, cfg.Scanned = lag.UntilCaughtUp, o.Timeout, o.sayWaiting
	case o.Watch:
		cfg.Mode = lag.Watching
		if o.timeoutSet {
			cfg.Timeout = o.Timeout
		}
		cfg.Scanned, cfg.OnChange = o.watchView(p, scope, popts)
	}
	rep, err := lag.Run(ctx, cfg, o.client, targets)
	switch {
	case errors.Is(err, lag.ErrAllRefused):
		return exitcode.Cluster(err)
	case errors.Is(err, lag.ErrStalled):
		if perr := o.print(p, rep, scope, popts); perr != nil {
			return perr
		}
		return exitcode.Findingf("%s", text.Escape(err.Error()))
	case errors.Is(err, lag.ErrStillLagging):
		if perr := o.print(p, rep, scope, popts); perr != nil {
			return perr
		}
		return exitcode.Findingf("timed out after %s: %s", output.Duration(o.Timeout), o.stillNotDone(rep))
	case err != nil:
		return err
	}
	if o.Watch {
		// Ctrl-C, like --timeout, is the end of the watch: it exits by
		// what lags then.
		if n := rep.Findings(); n > 0 {
			return exitcode.Findingf("watch ended: %s %s", text.Plural(n, "object"), lagVerb(rep))
		}
		return nil
	}
	if err := o.print(p, rep, scope, popts); err != nil {
		return err
	}
	if rep.Findings() > 0 {
		return exitcode.SilentFinding()
	}
	return nil
}

// stillNotDone says how many objects are not done: "2 objects still lag",
// or with --for rollout "2 objects not rolled out (1 lagging, 1 paused)".
func (o *LagOptions) stillNotDone(rep *lag.Report) string {
	n := rep.Findings()
	if o.goal != lag.RolledOut {
		return text.Plural(n, "object") + " still " + lagVerb(rep)
	}
	var states []lag.State
	byState := map[lag.State]int{}
	for _, it := range rep.Items {
		if it.Finding {
			if byState[it.State] == 0 {
				states = append(states, it.State)
			}
			byState[it.State]++
		}
	}
	parts := make([]string, len(states))
	for i, st := range states {
		parts[i] = fmt.Sprintf("%d %s", byState[st], st)
	}
	return fmt.Sprintf("%s not rolled out (%s)", text.Plural(n, "object"), strings.Join(parts, ", "))
}

// lagVerb agrees with the number of the report's findings.
func lagVerb(rep *lag.Report) string {
	if rep.Findings() == 1 {
		return "lags"
	}
	return "lag"
}

func (o *LagOptions) print(p *output.Printer, rep *lag.Report, scope lagprint.Scope, popts lagprint.Options) error {
	if p.Structured() {
		return p.PrintObject(lagprint.NewDocument(rep, scope))
	}
	if len(rep.Items) == 0 {
		tot := rep.Totals()
		what := "nothing lags"
		if o.goal == lag.RolledOut {
			what = "nothing lags, everything is rolled out"
		}
		fmt.Fprintf(o.ErrOut, "%s: %s of %s checked\n", what, text.Plural(tot.Objects, "object"), text.Plural(len(rep.Types), "type"))
	}
	if f := o.Output.Format(); f.CI() {
		// With --wait, the state when the wait ended: caught up, timed
		// out or stalled.
		return lagprint.PrintCI(o.Out, f, rep, cmdutil.CITool())
	}
	return lagprint.PrintTable(p, rep, popts)
}

// sayWaiting says, before --wait watches, how many objects it waits for.
func (o *LagOptions) sayWaiting(rep *lag.Report) error {
	if n := rep.Findings(); n > 0 {
		limit := "no time limit"
		if o.Timeout > 0 {
			limit = "timeout " + output.Duration(o.Timeout)
		}
		what := "catch up"
		if o.goal == lag.RolledOut {
			what = "catch up and roll out"
		}
		fmt.Fprintf(o.ErrOut, "waiting for %s to %s (%s)\n", text.Plural(n, "object"), what, limit)
	}
	return nil
}

// watchView is --watch's view: the report after the scan and, on every
// change, redrawn in place on a terminal (and printed whole again with -o
// json or yaml), otherwise a row per changed item.
func (o *LagOptions) watchView(p *output.Printer, scope lagprint.Scope, popts lagprint.Options) (func(*lag.Report) error, func(*lag.Report, []lag.Item) error) {
	view := output.NewLiveView(o.Out, !p.Structured() && output.IsTerminal(o.Out))
	live := view.Live()
	if live {
		// A frame redrawn in place holds its summary and notes.
		popts.Notes = nil
	}
	redraw := func(rep *lag.Report) error {
		if p.Format == output.YAML {
			fmt.Fprintln(o.Out, "---")
		}
		return view.Redraw(func() error {
			if live {
				fmt.Fprintf(o.Out, "kubectl rv lag: %s\n\n", rep.Now.Format(time.TimeOnly))
			}
			return o.print(p, rep, scope, popts)
		})
	}
	onChange := func(rep *lag.Report, changed []lag.Item) error {
		if live || p.Structured() {
			return redraw(rep)
		}
		for _, it := range changed {
			if err := lagprint.PrintChange(p, rep, it, popts); err != nil {
				return err
			}
		}
		return nil
	}
	return redraw, onChange
}
