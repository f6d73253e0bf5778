package cmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/inspect"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/watchprint"
)

const watchLong = `Stream every change of the selected objects with who made it and what it changed.

One row per event: TIME, EVENT (ADDED, MODIFIED, DELETED, GAP, FIGHT, and
BOOKMARK with --show-bookmarks), OBJECT, RV (the new resourceVersion), REVS
(cluster revisions since the object's previous RV), GEN (metadata.generation,
with * when this write bumped it), MANAGER (the field manager whose
managedFields entry moved; "?" and the reason when it cannot be known) and
FIELDS (the changed fields with old and new values, e.g. .spec.replicas 3->5).

The watch starts with a list and watches from the list's resourceVersion
(--since RV starts from RV instead, without a list). It resumes after a
dropped connection or an API server restart from the last resourceVersion it
saw, without duplicates. When the API server has compacted the history it
needs (410 Gone), it relists and prints a GAP row naming the lost range,
followed by the changes still visible by comparing the relist with the last
known state (marked "seen after gap").

A FIGHT row says that a field changed hands between managers at least
--fight-threshold times within --fight-window; --fail-on-fight makes the
command exit 1 at the end if there was one. Objects written faster than
--hot-rate writes per second are marked hot.

It ends on Ctrl-C, after --for or after --max-events, with a summary: writes
per object (spec, status and metadata churn apart), per manager, the hottest
fields, gaps and fights. -o json prints one JSON object per line instead
(kind WatchEvent, then a WatchSummary); the schema is in docs/watch.md.

Secret values are shown as hashes unless --show-secrets is given.`

const watchExample = `  # Who changes the Deployment web, and what
  kubectl rv watch deployment/web

  # Every Deployment and ConfigMap of a namespace, with a diff under each row
  kubectl rv watch deployments,configmaps -n shop --diff

  # A CI soak check: fail if two managers fight over a field within 10 minutes
  kubectl rv watch deployments -A --for 10m --fail-on-fight

  # Record a stream as JSON lines, and replay it offline later
  kubectl rv watch pods -l app=web --record web.jsonl --for 5m
  kubectl rv watch --replay web.jsonl

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
	Diff           bool
	Record         string
	Replay         string
	ShowBookmarks  bool
	ShowSecrets    bool
	FightThreshold int
	FightWindow    time.Duration
	FailOnFight    bool
	HotRate        float64
	For            time.Duration
	MaxEvents      int
	Output         *OutputFlags

	namespace string
	dynamic   func() (dynamic.Interface, error)
	mapper    func() (meta.RESTMapper, error)
	now       func() time.Time
	genericiooptions.IOStreams
}

// NewWatchOptions returns the options with their defaults.
func NewWatchOptions(streams genericiooptions.IOStreams) *WatchOptions {
	def := inspect.NewConfig()
	return &WatchOptions{
		ChunkSize:      500,
		FightThreshold: def.FightThreshold,
		FightWindow:    def.FightWindow,
		HotRate:        def.HotRate,
		Output:         NewOutputFlags(output.Table, output.Wide, output.JSON),
		now:            time.Now,
		IOStreams:      streams,
	}
}

// NewCmdWatch returns kubectl rv watch.
func NewCmdWatch(f *Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewWatchOptions(streams)
	cmd := &cobra.Command{
		Use:               "watch (TYPE[,TYPE...] [NAME...] | TYPE/NAME ...) [flags]",
		Short:             "Stream changes with their writer, changed fields, gaps and fights",
		Long:              watchLong,
		Example:           watchExample,
		ValidArgsFunction: ResourceTypeOrNameCompletion(f),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Complete(f, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.LabelSelector, "selector", "l", "", "Label selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	fs.StringVar(&o.FieldSelector, "field-selector", "", "Field selector to filter on, for example metadata.name=web.")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Watch objects across all namespaces (-n is ignored).")
	fs.Int64Var(&o.ChunkSize, "chunk-size", o.ChunkSize, "List in pages of this size; 0 disables paging.")
	fs.StringVar(&o.Since, "since", "", "Start watching after this resourceVersion instead of listing first.")
	fs.BoolVar(&o.Diff, "diff", false, "Print every changed field, with old and new values, under each row.")
	fs.StringVar(&o.Record, "record", "", "Also write the stream to this file as JSON lines (full objects, Secrets redacted), for --replay.")
	fs.StringVar(&o.Replay, "replay", "", "Render a recording made with --record instead of watching a cluster.")
	fs.BoolVar(&o.ShowBookmarks, "show-bookmarks", false, "Print BOOKMARK events.")
	fs.BoolVar(&o.ShowSecrets, "show-secrets", false, "Show Secret values instead of their hashes (also in recordings).")
	fs.IntVar(&o.FightThreshold, "fight-threshold", o.FightThreshold, "Report a FIGHT when a field changes hands between managers this many times within --fight-window.")
	fs.DurationVar(&o.FightWindow, "fight-window", o.FightWindow, "The window fights are counted in.")
	fs.BoolVar(&o.FailOnFight, "fail-on-fight", false, "Exit 1 at the end if a fight was seen.")
	fs.Float64Var(&o.HotRate, "hot-rate", o.HotRate, "Mark objects written more than this many times per second (over 10s); 0 turns it off.")
	fs.DurationVar(&o.For, "for", 0, "Stop after this long and print the summary (0: until Ctrl-C).")
	fs.IntVar(&o.MaxEvents, "max-events", 0, "Stop after this many ADDED, MODIFIED, DELETED, GAP and FIGHT rows, not counting the initial list (0: no limit).")
	o.Output.AddFlags(fs)
	return cmd
}

// Complete records the arguments and wires the clients; it contacts nothing.
func (o *WatchOptions) Complete(f *Factory, args []string) error {
	o.Args = args
	if o.Replay != "" {
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
	if o.Replay != "" {
		if len(o.Args) > 0 {
			return exitcode.Usagef("--replay renders a recording: give no TYPE arguments")
		}
		for flag, set := range map[string]bool{"--since": o.Since != "", "--record": o.Record != "", "-l": o.LabelSelector != "", "--field-selector": o.FieldSelector != "", "-A": o.AllNamespaces, "--for": o.For != 0} {
			if set {
				return exitcode.Usagef("%s cannot be used with --replay", flag)
			}
		}
	} else if len(o.Args) == 0 {
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
	switch {
	case o.FightThreshold < 1:
		return exitcode.Usagef("--fight-threshold must be at least 1, got %d", o.FightThreshold)
	case o.FightWindow <= 0:
		return exitcode.Usagef("--fight-window must be positive, got %s", o.FightWindow)
	case o.HotRate < 0:
		return exitcode.Usagef("--hot-rate must be 0 (off) or positive, got %g", o.HotRate)
	case o.For < 0:
		return exitcode.Usagef("--for must be 0 (no limit) or positive, got %s", o.For)
	case o.MaxEvents < 0:
		return exitcode.Usagef("--max-events must be 0 (no limit) or positive, got %d", o.MaxEvents)
	case o.ChunkSize < 0:
		return exitcode.Usagef("--chunk-size must be 0 or positive, got %d", o.ChunkSize)
	}
	if o.Record != "" && o.Record == o.Replay {
		return exitcode.Usagef("--record and --replay name the same file")
	}
	return nil
}

func (o *WatchOptions) trackerConfig() inspect.Config {
	cfg := inspect.NewConfig()
	cfg.FightThreshold, cfg.FightWindow, cfg.HotRate, cfg.ShowBookmarks = o.FightThreshold, o.FightWindow, o.HotRate, o.ShowBookmarks
	return cfg
}

// Run watches (or replays) and prints.
func (o *WatchOptions) Run(ctx context.Context) error {
	if o.Replay != "" {
		return o.runReplay()
	}
	targets, err := o.resolveTargets()
	if err != nil {
		return err
	}
	client, err := o.dynamic()
	if err != nil {
		return err
	}
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	pr := watchprint.New(p, watchprint.Options{Diff: o.Diff, ShowNamespace: o.AllNamespaces, Location: time.Local})

	var rec *inspect.RecordingWriter
	if o.Record != "" {
		f, err := os.Create(o.Record)
		if err != nil {
			return exitcode.Usagef("--record: %w", err)
		}
		defer f.Close()
		names := make([]string, len(targets))
		for i, t := range targets {
			names[i] = t.String()
		}
		h := inspect.NewRecordingHeader(o.now().UTC(), names, !o.ShowSecrets)
		h.AllNamespaces = o.AllNamespaces
		if rec, err = inspect.NewRecordingWriter(f, h); err != nil {
			return err
		}
	}

	if o.For > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.For)
		defer cancel()
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()

	scfg := inspect.NewStreamConfig()
	scfg.Targets, scfg.LabelSelector, scfg.FieldSelector, scfg.Since = targets, o.LabelSelector, o.FieldSelector, o.Since
	scfg.ShowSecrets, scfg.ChunkSize = o.ShowSecrets, o.ChunkSize
	// Recordings and JSON keep UTC; the table shows local time.
	scfg.Now = func() time.Time { return o.now().UTC() }
	scfg.Warnf = func(format string, args ...any) {
		output.Warnf(o.ErrOut, format, args...)
	}
	events := make(chan inspect.RecordedEvent, 1024)
	done := make(chan error, 1)
	go func() { done <- inspect.Stream(ctx, client, scfg, events) }()

	tr := inspect.NewTracker(o.trackerConfig())
	counted := 0
	listed := map[string]int{}
	var writeErr error
	handle := func(ev inspect.RecordedEvent) {
		if writeErr != nil || (o.MaxEvents > 0 && counted >= o.MaxEvents) {
			return
		}
		switch {
		case ev.Type == inspect.RecordList:
			listed[ev.Resource]++
		case ev.Type == inspect.RecordSynced && ev.Reason == inspect.SyncInitial:
			if listed[ev.Resource] == 0 {
				fmt.Fprintf(o.ErrOut, "No %s found yet; watching from resourceVersion %s.\n", resourceDisplay(ev.Resource), ev.ResourceVersion)
			}
			listed[ev.Resource] = 0
		}
		if rec != nil {
			if err := rec.Write(ev); err != nil {
				writeErr = err
				stop()
				return
			}
		}
		for _, e := range tr.Observe(ev) {
			if err := pr.Event(e); err != nil {
				writeErr = err
				stop()
				return
			}
			if counts(e) {
				counted++
			}
		}
		if o.MaxEvents > 0 && counted >= o.MaxEvents {
			stop()
		}
	}
	for {
		select {
		case ev := <-events:
			handle(ev)
		case err := <-done:
			if err != nil {
				return err
			}
			// Stream has returned, so nothing more is sent: drain what is
			// buffered.
			for len(events) > 0 {
				handle(<-events)
			}
			if writeErr != nil {
				return writeErr
			}
			if err := pr.Summary(tr.Summary(o.now().UTC())); err != nil {
				return err
			}
			return o.fightResult(tr)
		}
	}
}

// resourceDisplay turns group/version/resource into resource.group.
func resourceDisplay(gvr string) string {
	parts := strings.Split(gvr, "/")
	if len(parts) == 3 {
		return parts[2] + "." + parts[0]
	}
	return parts[len(parts)-1]
}

// counts says whether a row counts towards --max-events.
func counts(e inspect.Event) bool {
	return e.Type != inspect.EventBookmark && !e.Initial
}

func (o *WatchOptions) fightResult(tr *inspect.Tracker) error {
	if o.FailOnFight && tr.Fights() > 0 {
		return exitcode.Findingf("%d fights seen (--fail-on-fight)", tr.Fights())
	}
	return nil
}

func (o *WatchOptions) runReplay() error {
	f, err := os.Open(o.Replay)
	if err != nil {
		return exitcode.Usagef("--replay: %w", err)
	}
	defer f.Close()
	rec, err := inspect.ReadRecording(f)
	if err != nil {
		return exitcode.Usagef("--replay %s: %w", o.Replay, err)
	}
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	pr := watchprint.New(p, watchprint.Options{Diff: o.Diff, ShowNamespace: rec.Header.AllNamespaces, Location: time.Local})
	tr := inspect.NewTracker(o.trackerConfig())
	counted := 0
	for _, ev := range rec.Events {
		for _, e := range tr.Observe(ev) {
			if err := pr.Event(e); err != nil {
				return err
			}
			if counts(e) {
				counted++
			}
		}
		if o.MaxEvents > 0 && counted >= o.MaxEvents {
			break
		}
	}
	if err := pr.Summary(tr.Summary(time.Time{})); err != nil {
		return err
	}
	return o.fightResult(tr)
}

// resolveTargets maps the arguments to resources the kubectl way:
// TYPE[,TYPE...] [NAME...] or TYPE/NAME ...; names of one resource share one
// watch.
func (o *WatchOptions) resolveTargets() ([]inspect.Target, error) {
	mapper, err := o.mapper()
	if err != nil {
		return nil, err
	}
	types, err := resolveTypeNameArgs(mapper, o.Args)
	if err != nil {
		return nil, err
	}
	targets := make([]inspect.Target, len(types))
	for i, t := range types {
		targets[i] = inspect.Target{Resource: t.mapping.Resource, Names: t.names}
		if t.mapping.Scope.Name() == meta.RESTScopeNameNamespace && !o.AllNamespaces {
			targets[i].Namespace = o.namespace
		}
	}
	return targets, nil
}
