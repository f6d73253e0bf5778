package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/input"
	"github.com/kubectl-rv/kubectl-rv/pkg/inspect"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/watchprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Replay: watch --replay FILE re-renders a recording made with --record as
// the watch printed it; with --list, --object, --at, --from and --to it
// travels in it instead (the recorded objects, one object at a
// resourceVersion, the fields that changed between two). simulate replay
// is a deprecated alias of the travel views (newCmdSimulateReplay).

// travels reports whether the flags ask for a travel view of the
// recording rather than its stream.
func (o *WatchOptions) travels() bool { return o.List || o.Object != "" }

// addTravelFlags adds the flags that pick an object of a recording and its
// versions, to watch and to its deprecated alias simulate replay.
func (o *WatchOptions) addTravelFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Object, "object", "", "With --replay: show this object (TYPE/NAME, namespace from -n, or TYPE/NAMESPACE/NAME, TYPE as kubectl reads it) as it was at --at, or diff it --from --to.")
	fs.StringVar(&o.At, "at", "", "With --replay --object: the object as it was at this resourceVersion (default: its last recorded state).")
	fs.StringVar(&o.From, "from", "", "With --replay --object: diff from the state at this resourceVersion (with --to).")
	fs.StringVar(&o.To, "to", "", "With --replay --object: diff to the state at this resourceVersion (with --from).")
}

// replayArgs is the watch command line of the asked replay: what
// simulate replay's deprecation names.
func (o *WatchOptions) replayArgs() []string {
	args := []string{"watch", "--replay", o.Replay}
	if o.List {
		args = append(args, "--list")
	}
	for _, f := range []struct{ flag, value string }{{"--object", o.Object}, {"--at", o.At}, {"--from", o.From}, {"--to", o.To}} {
		if f.value != "" {
			args = append(args, f.flag, f.value)
		}
	}
	if f := o.Output.Output; f != "" && f != string(output.Table) {
		args = append(args, "-o", f)
	}
	return args
}

// validateReplay checks the flags of --replay without I/O.
func (o *WatchOptions) validateReplay() error {
	if o.Replay == "" {
		for flag, set := range map[string]bool{"--list": o.List, "--object": o.Object != "", "--at": o.At != "", "--from": o.From != "", "--to": o.To != ""} {
			if set {
				return exitcode.Usagef("%s travels in a recording: give it with --replay FILE", flag)
			}
		}
		if o.Output.Format() == output.YAML {
			return exitcode.Usagef("-o yaml is for --replay's --list and --object views: a watch prints -o json, one object per line")
		}
		return nil
	}
	if len(o.Args) > 0 {
		return exitcode.Usagef("--replay renders a recording: give no TYPE arguments")
	}
	for flag, set := range map[string]bool{"--since": o.Since != "", "--record": o.Record != "", "-l": o.LabelSelector != "", "--field-selector": o.FieldSelector != "", "-A": o.AllNamespaces, "--for": o.For != 0, "--wait-for-create": o.WaitForCreate} {
		if set {
			return exitcode.Usagef("%s cannot be used with --replay", flag)
		}
	}
	switch {
	case (o.From == "") != (o.To == ""):
		return exitcode.Usagef("--from and --to go together")
	case (o.At != "" || o.From != "") && o.Object == "":
		return exitcode.Usagef("--at, --from and --to need --object RESOURCE/NAME")
	case o.At != "" && o.From != "":
		return exitcode.Usagef("give --at, or --from and --to, not both")
	case o.List && o.Object != "":
		return exitcode.Usagef("give --list, or --object, not both")
	case o.Output.Format() == output.YAML && !o.travels():
		return exitcode.Usagef("-o yaml is for --replay's --list and --object views: a replay prints -o json, one object per line")
	}
	return nil
}

func (o *WatchOptions) runReplay(ctx context.Context) error {
	f, err := input.Open(ctx, o.Replay, nil)
	if err != nil {
		return exitcode.Usagef("--replay: %w", err)
	}
	defer f.Close()
	if o.travels() {
		return o.travel(f)
	}
	var pr *watchprint.Printer
	res, err := inspect.ReplayRecording(f, o.config(nil), func(h inspect.RecordingHeader, cut *inspect.RecordingError) (inspect.Sink, error) {
		o.warnCutShort(cut)
		pr, err = o.printer(h.AllNamespaces)
		return pr, err
	})
	if bad := (*inspect.RecordingError)(nil); errors.As(err, &bad) {
		return exitcode.Usagef("--replay %s: %w", o.Replay, err)
	}
	if err != nil {
		return err
	}
	return o.finish(pr, res)
}

// warnCutShort says that the recording's last line is cut short (what a
// killed recorder leaves), naming file:line, and that the lines before it
// are replayed.
func (o *WatchOptions) warnCutShort(cut *inspect.RecordingError) {
	if cut != nil {
		output.Warnf(o.ErrOut, "%s:%d: %v; replaying the %s before it", o.Replay, cut.Line, inspect.ErrCutShort, text.Plural(cut.Line-1, "line"))
	}
}

// travel reads the recording whole and prints the view the flags ask
// for: the recorded objects (--list), one object at a resourceVersion
// (--object, --at: its last recorded state by default) or the fields that
// changed between two (--object, --from, --to).
func (o *WatchOptions) travel(f io.Reader) error {
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	rec, err := inspect.ReadRecording(f)
	var bad *inspect.RecordingError
	switch {
	case errors.Is(err, inspect.ErrCutShort) && errors.As(err, &bad):
		o.warnCutShort(bad)
	case err != nil:
		return exitcode.Usagef("--replay %s: %w", o.Replay, err)
	}
	q := inspect.Travel{Object: o.Object, Namespace: o.namespace, At: o.At, From: o.From, To: o.To}
	res, err := q.In(rec)
	if oe := (*inspect.ObjectError)(nil); errors.As(err, &oe) {
		return exitcode.Usage(fmt.Errorf("--object: %w", err))
	}
	if err != nil {
		return exitcode.Usage(err)
	}
	switch {
	case res.List != nil:
		return watchprint.PrintHistoryList(p, o.ErrOut, *res.List)
	case res.Diff != nil:
		return watchprint.PrintVersionDiff(p, o.ErrOut, *res.Diff)
	}
	return watchprint.PrintVersionAt(p, *res.At)
}

// NewCmdSimulateReplay is kubectl rv simulate replay, a deprecated alias
// of watch --replay's travel views (watch_replay.go): replaying a
// recording is watch's, not the simulator's. It says where it moved, on
// ErrOut (cobra's Deprecated would print on Out, into -o json).
func NewCmdSimulateReplay(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewWatchOptions(streams)
	cmd := &cobra.Command{
		Use:    "replay RECORDING",
		Short:  "Deprecated: kubectl rv watch --replay RECORDING (--list | --object ...)",
		Hidden: true,
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return exitcode.Usagef("give the RECORDING to replay, a file written by kubectl rv watch --record: kubectl rv watch --replay rec.jsonl --list")
			case len(args) > 1:
				return exitcode.Usagef("simulate replay takes one RECORDING, got %d arguments: choose the object with --object", len(args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			o.Replay, o.List = args[0], o.Object == ""
			output.Warnf(o.ErrOut, "kubectl rv simulate replay is deprecated and will be removed: run kubectl rv %s", strings.Join(o.replayArgs(), " "))
			return cmdutil.RunE(f, o)(c, nil)
		},
	}
	o.addTravelFlags(cmd.Flags())
	o.Output.AddFlags(cmd.Flags())
	return cmd
}
