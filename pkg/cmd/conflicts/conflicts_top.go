package conflicts

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/findings"
	"github.com/kubectl-rv/kubectl-rv/pkg/load"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/conflictsprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/loadprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// views are every --view: the conflicts views, then who loads the server.
var views = append(slices.Clip(conflictsprint.Views), loadprint.ViewTop, loadprint.ViewWasted)

// hotFindings are what --fail-on takes: the hot loops of package load.
var hotFindings = findings.Vocabulary{
	{Name: load.HotRead, Noun: "hot read loop", Help: "a client gets one object at --hot-rate or faster for --hot-for"},
	{Name: load.WastedWrite, Noun: "wasted write loop", Help: "a client writes one object without effect at --hot-rate or faster for --hot-for"},
}

// topFlags are the flags that only --view top and wasted read.
var topFlags = []string{"by", "hot-rate", "hot-for", "fail-on"}

// loadOptions are the options of --view top and wasted.
type loadOptions struct {
	By      []string
	HotRate float64
	HotFor  time.Duration
	FailOn  string

	failOn findings.Policy
	cfg    load.Config
}

func (l *loadOptions) addFlags(cmd *cobra.Command, fs *pflag.FlagSet) {
	keys := topKeyNames()
	fs.StringArrayVar(&l.By, "by", nil, "With --view top: group the requests by "+strings.Join(keys, ", ")+" (default user); repeat to nest (--by user --by verb).")
	fs.Float64Var(&l.HotRate, "hot-rate", 1, "With --view top or wasted: a hot loop is a client's requests about one object at this many per second or more (gets, or writes without effect) ...")
	fs.DurationVar(&l.HotFor, "hot-for", time.Minute, "... for at least this long.")
	fs.StringVar(&l.FailOn, "fail-on", "", "With --view top or wasted: "+hotFindings.Help(""))
	_ = cmd.RegisterFlagCompletionFunc("by", cobra.FixedCompletions(keys, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions(hotFindings.Words(), cobra.ShellCompDirectiveNoFileComp))
}

// loadView says whether the view counts every request (package load).
func (o *ConflictsOptions) loadView() bool {
	return o.View == loadprint.ViewTop || o.View == loadprint.ViewWasted
}

// validateLoad checks the flags of --view top and wasted, and refuses
// theirs with the other views.
func (o *ConflictsOptions) validateLoad() error {
	if !o.loadView() {
		for _, name := range topFlags {
			if o.set(name) {
				return exitcode.Usagef("--%s is for --view top or --view wasted, which count every request", name)
			}
		}
		return nil
	}
	for _, name := range []string{"scenario", "fail-on-rate", "retry-window"} {
		if o.set(name) {
			return exitcode.Usagef("--view %s and --%s cannot be used together: --%s is about 409s and retries; --view %s counts requests", o.View, name, name, o.View)
		}
	}
	if o.Report != "" && !strings.EqualFold(filepath.Ext(o.Report), ".html") {
		return exitcode.Usagef("--report %q: --view %s draws no picture; give FILE.html for its tables on a page", o.Report, o.View)
	}
	l := &o.load
	if len(l.By) > 0 && o.View != loadprint.ViewTop {
		return exitcode.Usagef("--by is for --view top")
	}
	for _, b := range l.By {
		if !slices.Contains(load.Keys, load.Key(b)) {
			return exitcode.Usagef("--by %q: use one of %s", b, strings.Join(topKeyNames(), ", "))
		}
		l.cfg.By = append(l.cfg.By, load.Key(b))
	}
	switch {
	case l.HotRate < 0:
		return exitcode.Usagef("--hot-rate is requests per second, 0 or more, got %g", l.HotRate)
	case l.HotFor <= 0:
		return exitcode.Usagef("--hot-for must be positive, got %s", l.HotFor)
	}
	var err error
	if l.failOn, err = hotFindings.Parse("--fail-on", l.FailOn); err != nil {
		return err
	}
	cfg := o.cfg
	l.cfg.Window, l.cfg.Keep, l.cfg.Strict, l.cfg.Parallel = cfg.Window, cfg.Keeps, cfg.Strict, cfg.Parallel
	l.cfg.Hot = load.Hot{Rate: l.HotRate, For: l.HotFor}
	return nil
}

func topKeyNames() []string {
	out := make([]string, len(load.Keys))
	for i, k := range load.Keys {
		out[i] = string(k)
	}
	return out
}

// runLoad counts every request of the logs, prints the view and maps the
// hot loops to an exit code.
func (o *ConflictsOptions) runLoad(ctx context.Context) error {
	var rep *load.Report
	err := o.analyse(ctx, func(ctx context.Context, sources []audit.Source) (err error) {
		rep, err = load.Analyze(ctx, sources, o.load.cfg)
		return err
	})
	switch {
	case errors.Is(err, audit.ErrBadInput):
		return exitcode.Usage(err)
	case err != nil:
		return err
	}
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	switch f := o.Output.Format(); {
	case f.CI():
		// The hot loops, each at its object; the tables are not findings.
		err = loadprint.PrintCI(o.Out, f, rep, loadprint.CI{Tool: cmdutil.CITool(), Fails: o.load.failOn.Fails})
	case p.Structured():
		scope := loadprint.Scope{AuditLogs: append(slices.Clip(o.AuditLogs), o.Sources...), Since: o.Since, Until: o.Until,
			Object: o.Object, HotRate: o.load.HotRate, HotFor: o.load.HotFor.String()}
		err = p.PrintObject(loadprint.NewDocument(rep, scope))
	default:
		top := o.Top
		if !o.set("top") {
			top = loadprint.DefaultTop
		}
		err = loadprint.Print(p, rep, o.View, top)
	}
	if err != nil {
		return err
	}
	page := func() []byte { return loadprint.HTML(rep) }
	if err := cmdutil.WriteReport(o.Report, page, page); err != nil {
		return err
	}
	counts := findings.Counts{}
	for _, f := range rep.Findings {
		counts[f.Kind]++
		if o.load.failOn.Fails(f.Kind) && p.Structured() {
			output.Warnf(o.ErrOut, "%s: %s, %s: %d requests from %s for %s", f.Kind, text.Escape(f.Client), text.Escape(f.Object), f.Count,
				f.From.UTC().Format(time.RFC3339), output.Duration(f.To.Sub(f.From)))
		}
	}
	return o.load.failOn.Exit(hotFindings, counts)
}
