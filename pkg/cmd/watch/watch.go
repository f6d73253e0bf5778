package watch

import (
	"cmp"
	"context"
	"errors"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/findings"
	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
	"github.com/kubectl-rv/kubectl-rv/pkg/inspect"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/watchprint"
)

const watchLong = `Stream every change of the selected objects with who made it and what it changed.

One row per event: TIME, EVENT (ADDED, MODIFIED, DELETED, GAP, FIGHT, and
BOOKMARK with --show-bookmarks), OBJECT, RV (the new resourceVersion), REVS
(cluster revisions since the object's previous RV), GEN (metadata.generation,
* when this write bumped it), MANAGER (the field manager whose entry moved;
"?" and why when unknown) and FIELDS (the changed fields: .spec.replicas 3->5).

The watch starts with a list and watches from the list's resourceVersion
(--since RV starts from RV instead, without a list). It resumes after a
dropped connection or an API server restart without duplicates; when the
history it needs was compacted (410 Gone), it relists and prints a GAP row
naming the lost range, then the changes the relist shows ("seen after gap").

A FIGHT row says a field changed hands between managers --fight-threshold
times or more within --fight-window (--fail-on fight then exits 1 at the
end); objects written faster than --hot-rate writes per second are marked hot.

It ends on Ctrl-C, after --for or after --max-events, with a summary: writes
per object (spec, status and metadata churn apart), per manager, the hottest
fields, gaps and fights. -o json prints one JSON object per line instead
(kind WatchEvent, then a WatchSummary).

--replay FILE re-renders a recording; with --list (the recorded objects and
their resourceVersions) or --object TYPE/NAME (the object at --at RV, or
the fields that changed --from RV --to RV) it travels in it instead. Secret
values are shown as hashes unless --show-secrets is given.

Docs: docs/watch.md`

const watchExample = `  # Who changes the Deployment web, and what
  kubectl rv watch deployment/web

  # Every Deployment and ConfigMap of a namespace, with a diff under each row
  kubectl rv watch deployments,configmaps -n shop --diff

  # A CI soak check: fail if two managers fight over a field within 10 minutes
  kubectl rv watch deployments -A --for 10m --fail-on fight

  # Record a stream as JSON lines, and replay it offline later
  kubectl rv watch pods -l app=web --record web.jsonl --for 5m
  kubectl rv watch --replay web.jsonl

  # Travel in a recording: its objects, one of them at a resourceVersion, a diff
  kubectl rv watch --replay web.jsonl --list
  kubectl rv watch --replay web.jsonl --object deploy/web --at 812
  kubectl rv watch --replay web.jsonl --object deploy/web --from 812 --to 990

  # Resume from a resourceVersion seen earlier (reports a GAP if it is gone)
  kubectl rv watch deployments --since 123456 -o json`

// WatchOptions are the options of kubectl rv watch.
type WatchOptions struct {
	Args          []string
	LabelSelector string
	FieldSelector string
	AllNamespaces bool
	ChunkSize     int64

	Since          string
	WaitForCreate  bool
	Diff           bool
	Record         string
	Replay         string
	List           bool
	Object         string
	At             string
	From, To       string
	ShowBookmarks  bool
	ShowSecrets    bool
	FightThreshold int
	FightWindow    time.Duration
	FailOn         string
	FailOnFight    bool
	failOn         findings.Policy
	HotRate        float64
	For            time.Duration
	MaxEvents      int
	Output         *cmdutil.OutputFlags

	namespace string
	dynamic   func() (dynamic.Interface, error)
	mapper    func() (meta.RESTMapper, error)
	now       func() time.Time
	genericiooptions.IOStreams
}

// NewWatchOptions returns the options with their defaults.
func NewWatchOptions(streams genericiooptions.IOStreams) *WatchOptions {
	def := inspect.NewTrackerConfig()
	return &WatchOptions{
		ChunkSize:      500,
		FightThreshold: def.FightThreshold,
		FightWindow:    def.FightWindow,
		HotRate:        def.HotRate,
		Output:         cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML),
		now:            time.Now,
		IOStreams:      streams,
	}
}

// NewCmdWatch returns kubectl rv watch.
func NewCmdWatch(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewWatchOptions(streams)
	cmd := &cobra.Command{
		Use:               "watch (TYPE[,TYPE...] [NAME...] | TYPE/NAME ...) [flags]",
		Short:             "Stream changes with their writer, changed fields, gaps and fights",
		Long:              watchLong,
		Example:           watchExample,
		ValidArgsFunction: cmdutil.ResourceTypeOrNameCompletion(f),
		RunE:              cmdutil.RunE(f, o),
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.LabelSelector, "selector", "l", "", "Label selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	fs.StringVar(&o.FieldSelector, "field-selector", "", "Field selector to filter on, for example metadata.name=web.")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Watch objects across all namespaces (-n is ignored).")
	fs.Int64Var(&o.ChunkSize, "chunk-size", o.ChunkSize, "List in pages of this size; 0 disables paging.")
	fs.StringVar(&o.Since, "since", "", "Start watching after this resourceVersion instead of listing first.")
	fs.BoolVar(&o.WaitForCreate, "wait-for-create", false, "Wait for a named object that does not exist yet, instead of exiting 2.")
	fs.BoolVar(&o.Diff, "diff", false, "Print every changed field, with old and new values, under each row.")
	fs.StringVar(&o.Record, "record", "", "Also write the stream to this file as JSON lines (full objects, Secrets redacted), for --replay.")
	fs.StringVar(&o.Replay, "replay", "", "Render a recording made with --record instead of watching a cluster.")
	fs.BoolVar(&o.List, "list", false, "With --replay: list the recorded objects and their resourceVersions instead of the stream.")
	o.addTravelFlags(fs)
	fs.BoolVar(&o.ShowBookmarks, "show-bookmarks", false, "Print BOOKMARK events.")
	fs.BoolVar(&o.ShowSecrets, "show-secrets", false, "Show Secret values instead of their hashes (also in recordings).")
	fs.IntVar(&o.FightThreshold, "fight-threshold", o.FightThreshold, "Report a FIGHT when a field changes hands between managers this many times within --fight-window.")
	fs.DurationVar(&o.FightWindow, "fight-window", o.FightWindow, "The window fights are counted in.")
	cmdutil.AddFailOnFlag(fs, &o.FailOn, inspect.Findings, "")
	cmdutil.AddFailOnAlias(fs, &o.FailOnFight, "fail-on-fight", "fight")
	fs.Float64Var(&o.HotRate, "hot-rate", o.HotRate, "Mark objects written more than this many times per second (over 10s); 0 turns it off.")
	fs.DurationVar(&o.For, "for", 0, "Stop after this long and print the summary (0: until Ctrl-C).")
	fs.IntVar(&o.MaxEvents, "max-events", 0, "Stop after this many ADDED, MODIFIED, DELETED, GAP and FIGHT rows, not counting the initial list (0: no limit).")
	o.Output.AddFlags(fs)
	// A stream is a table or JSON lines: yaml shows only --replay's views.
	fs.Lookup("output").Usage = "Output format. One of: (table, wide, json); yaml only with --replay and --list or --object."
	return cmd
}

// checkObjectNamespace refuses an --object TYPE/NAMESPACE/NAME whose
// namespace is not the one -n gave.
func checkObjectNamespace(object, ns string, explicit bool) error {
	on, err := apitypes.ParseObjectName(object)
	if err != nil || !explicit {
		// A bad --object is reported when the recording is searched.
		return nil
	}
	if _, err := on.InNamespace(ns); err != nil {
		return exitcode.Usagef("--object %w", err)
	}
	return nil
}

// Complete records the arguments and wires the clients; it contacts nothing.
func (o *WatchOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.Args = args
	if o.Replay != "" {
		// A recording needs no kubeconfig; -n or the kubeconfig's
		// namespace only completes --object TYPE/NAME.
		if o.Object != "" {
			if ns, explicit, err := f.Namespace(); err == nil {
				o.namespace = ns
				return checkObjectNamespace(o.Object, ns, explicit)
			}
		}
		return nil
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	if ns == "" {
		ns = "default"
	}
	o.namespace = ns
	o.dynamic = func() (dynamic.Interface, error) { return f.Dynamic(0, 0) }
	o.mapper = f.Mapper
	return nil
}

// Validate checks the flags without I/O.
func (o *WatchOptions) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	if o.Output.Format() == output.JSON && o.Diff {
		return exitcode.Usagef("--diff is for table output: -o json already carries every change in fields")
	}
	if err := o.validateReplay(); err != nil {
		return err
	}
	if o.Replay == "" && len(o.Args) == 0 {
		return exitcode.Usagef("say what to watch: TYPE, TYPE NAME or TYPE/NAME (for example deployments or deployment/web), or --replay FILE")
	}
	if o.Since != "" {
		if _, err := resourceversion.CompareResourceVersion(o.Since, o.Since); err != nil {
			return exitcode.Usagef("--since %q is not a resourceVersion: use the positive integer from an object's metadata.resourceVersion", o.Since)
		}
	}
	if _, err := labels.Parse(o.LabelSelector); err != nil {
		return exitcode.Usagef("-l %q: %w", o.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(o.FieldSelector); err != nil {
		return exitcode.Usagef("--field-selector %q: %w", o.FieldSelector, err)
	}
	if err := cmp.Or(cmdutil.AtLeast("--fight-threshold", o.FightThreshold, 1),
		cmdutil.Positive("--fight-window", o.FightWindow),
		cmdutil.ZeroOrPositive("--hot-rate", o.HotRate, "off"),
		cmdutil.ZeroOrPositive("--for", o.For, "no limit"),
		cmdutil.ZeroOrPositive("--max-events", o.MaxEvents, "no limit")); err != nil {
		return err
	}
	if err := cmdutil.CheckChunkSize(o.ChunkSize); err != nil {
		return err
	}
	if o.Record != "" && o.Record == o.Replay {
		return exitcode.Usagef("--record and --replay name the same file")
	}
	var err error
	o.failOn, err = inspect.Findings.Parse("--fail-on", cmdutil.WithFailOnAlias(o.FailOn, o.FailOnFight, "fight"))
	return err
}

// config turns the flags into the engine's configuration; targets are
// nil for --replay.
func (o *WatchOptions) config(targets []follow.Target) inspect.Config {
	cfg := inspect.NewConfig()
	cfg.Tracker.FightThreshold, cfg.Tracker.FightWindow, cfg.Tracker.HotRate, cfg.Tracker.ShowBookmarks = o.FightThreshold, o.FightWindow, o.HotRate, o.ShowBookmarks
	cfg.MaxEvents = o.MaxEvents
	s := &cfg.Stream
	s.Targets, s.LabelSelector, s.FieldSelector, s.Since = targets, o.LabelSelector, o.FieldSelector, o.Since
	s.ShowSecrets, s.ChunkSize = o.ShowSecrets, o.ChunkSize
	s.RequireNames = !o.WaitForCreate
	// Recordings and JSON keep UTC; the table shows local time.
	s.Now = func() time.Time { return o.now().UTC() }
	cfg.AllNamespaces = o.AllNamespaces
	return cfg
}

func (o *WatchOptions) printer(allNamespaces bool) (*watchprint.Printer, error) {
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return nil, err
	}
	return watchprint.New(p, watchprint.Options{Diff: o.Diff, ShowNamespace: allNamespaces, Location: time.Local, ErrOut: o.ErrOut}), nil
}

// Run watches (or replays) and prints.
func (o *WatchOptions) Run(ctx context.Context) error {
	if o.Replay != "" {
		return o.runReplay(ctx)
	}
	targets, err := o.resolveTargets()
	if err != nil {
		return err
	}
	client, err := o.dynamic()
	if err != nil {
		return err
	}
	pr, err := o.printer(o.AllNamespaces)
	if err != nil {
		return err
	}
	cfg := o.config(targets)
	if o.Record != "" {
		f, err := os.Create(o.Record)
		if err != nil {
			return exitcode.Usagef("--record: %w", err)
		}
		defer f.Close()
		cfg.Record = f
	}
	if o.For > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.For)
		defer cancel()
	}
	res, err := inspect.Run(ctx, follow.NewDynamicSource(client), cfg, pr)
	if nf := (*follow.NotFoundError)(nil); errors.As(err, &nf) {
		return exitcode.Usagef("%w: check the name, or give --wait-for-create to wait for it", err)
	}
	if err != nil {
		return err
	}
	return o.finish(pr, res)
}

// finish prints the summary and maps fights to the exit code.
func (o *WatchOptions) finish(pr *watchprint.Printer, res inspect.Result) error {
	if err := pr.Summary(res.Summary); err != nil {
		return err
	}
	return o.failOn.Exit(inspect.Findings, findings.Counts{"fight": res.Fights})
}

// resolveTargets maps the arguments to resources the kubectl way:
// TYPE[,TYPE...] [NAME...] or TYPE/NAME ...; names of one resource share one
// watch.
func (o *WatchOptions) resolveTargets() ([]follow.Target, error) {
	mapper, err := o.mapper()
	if err != nil {
		return nil, err
	}
	types, err := cmdutil.ResolveTypeNameArgs(mapper, o.Args)
	if err != nil {
		return nil, err
	}
	targets := make([]follow.Target, len(types))
	for i, t := range types {
		targets[i] = follow.Target{Resource: t.Mapping.Resource, Names: t.Names}
		if t.Mapping.Scope.Name() == meta.RESTScopeNameNamespace && !o.AllNamespaces {
			targets[i].Namespace = o.namespace
		}
	}
	return targets, nil
}
