package churn

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/churn"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/findings"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/churnprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

const churnLong = `Rank objects, managers and types by writes per minute, and find silent hot
loops and fights.

churn watches object metadata only (name, resourceVersion, generation,
managedFields) of every listable and watchable type, or of the types given,
and counts every write, attributed to a manager from managedFields and
classified: spec (the generation moved), status (through /status, or by a
manager owning only .status), metadata, or other (a type without generation).

It flags:
  self-loops  one manager rewriting one object more than --loop-rate times
              a minute, no other writer in between and no generation change
              (a status or metadata write that re-triggers its own watch);
  fights      a field changing hands between managers --fight-threshold
              times within a minute, as kubectl rv watch detects them.

--explain N fetches the full object on the next writes of the N busiest
objects and names the fields that change.

Without -A, -n's namespace is watched (cluster-scoped types only if named).
A type you may not list or watch is left out with a warning: the results are
then partial. After a 410 Gone the type is relisted and the gap reported.

A live view is redrawn every 2 s on a terminal; the report is printed on
Ctrl-C or after --for. Exit status: 0, or 1 when --fail-on matches, 2 on bad
usage, 3 when the cluster cannot be reached or refuses every type.

Docs: docs/churn.md`

const churnExample = `  # Every type in every namespace, for five minutes
  kubectl rv churn -A --for 5m

  # Deployments and ConfigMaps of the current namespace, until Ctrl-C
  kubectl rv churn deployments,configmaps

  # Name the changing fields of the 3 busiest objects; fail on a loop (CI)
  kubectl rv churn -A --for 2m --explain 3 --fail-on loop

  # The versioned ChurnReport
  kubectl rv churn -A --for 1m -o json

  # In CI: annotations per loop and fight (GitHub Actions); -o junit and -o sarif for reports
  kubectl rv churn -n shop --for 2m --fail-on loop -o github`

// churn's client rate limit: one list and one watch per type must not wait
// on kubectl's default of 5 requests per second.
const (
	churnQPS   = 50
	churnBurst = 100
)

// ChurnOptions are the options of kubectl rv churn.
type ChurnOptions struct {
	Output         *cmdutil.OutputFlags
	AllNamespaces  bool
	For            time.Duration
	LoopRate       float64
	FightThreshold int
	Top            int
	Explain        int
	FailOn         string
	failOn         findings.Policy
	ChunkSize      int64

	args      []string
	namespace string
	clients   churn.Clients
	// types returns the types to watch and discovery's warnings.
	types func() (apitypes.Discovered, error)
	genericiooptions.IOStreams
}

// NewCmdChurn returns kubectl rv churn.
func NewCmdChurn(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	def := churn.NewConfig()
	o := &ChurnOptions{
		Output:   cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML, output.GitHub, output.JUnit, output.SARIF),
		LoopRate: def.LoopRate, FightThreshold: def.FightThreshold, Top: def.Top, ChunkSize: def.Stream.ChunkSize,
		IOStreams: streams,
	}
	cmd := &cobra.Command{
		Use:               "churn [TYPE[,TYPE...]]",
		Short:             "Rank objects, managers and types by writes; find hot loops and fights",
		Long:              churnLong,
		Example:           churnExample,
		ValidArgsFunction: cmdutil.ResourceTypeCompletion(f),
		RunE:              cmdutil.RunE(f, o),
	}
	fs := cmd.Flags()
	o.Output.AddFlags(fs)
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Watch every namespace and the cluster-scoped types (-n is ignored).")
	fs.DurationVar(&o.For, "for", 0, "Stop after this long and print the report (0: until Ctrl-C).")
	fs.Float64Var(&o.LoopRate, "loop-rate", o.LoopRate, "A self-loop is one manager rewriting one object, with no other writer in between, more than this many times a minute without a generation change.")
	fs.IntVar(&o.FightThreshold, "fight-threshold", o.FightThreshold, "A fight is a field changing hands this many times within a minute.")
	fs.IntVar(&o.Top, "top", o.Top, "How many objects, managers and types to rank.")
	fs.IntVar(&o.Explain, "explain", 0, "Fetch the full object on the next writes of the N busiest objects and name the fields that change.")
	cmdutil.AddFailOnFlag(fs, &o.FailOn, churn.Findings, "")
	fs.Int64Var(&o.ChunkSize, "chunk-size", o.ChunkSize, "List in pages of this size; 0 lists in one page.")
	return cmd
}

// Complete resolves the namespace and the clients.
func (o *ChurnOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.args = args
	if !o.AllNamespaces {
		ns, _, err := f.Namespace()
		if err != nil {
			return err
		}
		o.namespace = ns
	}
	cfg, err := f.RESTConfig(churnQPS, churnBurst)
	if err != nil {
		return err
	}
	if o.clients.Metadata, err = metadata.NewForConfig(cfg); err != nil {
		return err
	}
	if o.Explain > 0 {
		if o.clients.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
			return err
		}
	}
	o.types = func() (apitypes.Discovered, error) { return cmdutil.ResolveAPITypes(f, o.args, o.AllNamespaces) }
	return nil
}

// Validate checks the flags without I/O.
func (o *ChurnOptions) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	if err := cmdutil.CheckTypeList(o.args, "churn watches"); err != nil {
		return err
	}
	var loopRate error
	if o.LoopRate <= 0 {
		loopRate = exitcode.Usagef("--loop-rate must be positive (writes a minute), got %g", o.LoopRate)
	}
	if err := cmp.Or(cmdutil.ZeroOrPositive("--for", o.For, "until Ctrl-C"), loopRate,
		cmdutil.AtLeast("--fight-threshold", o.FightThreshold, 1),
		cmdutil.AtLeast("--top", o.Top, 1),
		cmdutil.ZeroOrPositive("--explain", o.Explain, "off")); err != nil {
		return err
	}
	if err := cmdutil.CheckChunkSize(o.ChunkSize); err != nil {
		return err
	}
	var err error
	o.failOn, err = churn.Findings.Parse("--fail-on", o.FailOn)
	return err
}

func (o *ChurnOptions) config() churn.Config {
	cfg := churn.NewConfig()
	cfg.Namespace = o.namespace
	cfg.LoopRate, cfg.FightThreshold, cfg.Top, cfg.Explain = o.LoopRate, o.FightThreshold, o.Top, o.Explain
	cfg.Stream.ChunkSize = o.ChunkSize
	cfg.Stream.Now = func() time.Time { return time.Now().UTC() }
	cfg.Warnf = cmdutil.SyncWarnf(o.ErrOut)
	return cfg
}

// Run watches until Ctrl-C or --for, prints the report and maps it to an
// exit code.
func (o *ChurnOptions) Run(ctx context.Context) error {
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	types, err := o.types()
	if err != nil {
		return err
	}
	for _, w := range types.Warnings {
		output.Warnf(o.ErrOut, "%s", w)
	}
	until := "Ctrl-C"
	if o.For > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.For)
		defer cancel()
		until = o.For.String()
	}
	fmt.Fprintf(o.ErrOut, "Watching the metadata of %s until %s...\n", text.Plural(len(types.Types), "type"), until)
	scope := churnprint.Scope{Namespace: o.namespace, LoopRate: o.LoopRate, Types: cmdutil.TypeListArgs(o.args)}
	cfg := o.config()
	// On a terminal, a live top-N view redrawn in place, as top does; a
	// CI format is the report at the end only.
	f := o.Output.Format()
	view := output.NewLiveView(o.Out, !p.Structured() && !f.CI() && output.IsTerminal(o.Out))
	if view.Live() {
		cfg.Live = func(r *churn.Report) {
			_ = view.Redraw(func() error { return churnprint.Print(p, r, scope) })
		}
	}
	rep, err := churn.Run(ctx, o.clients, types.Types, cfg)
	if err != nil {
		return err
	}
	rep.Warnings = append(types.Warnings, rep.Warnings...)
	view.Clear()
	switch {
	case f.CI():
		err = churnprint.PrintCI(o.Out, f, rep, churnprint.CI{Tool: cmdutil.CITool(), Fails: o.failOn.Fails})
	case p.Structured():
		err = p.PrintObject(churnprint.NewDocument(rep, scope))
	default:
		err = churnprint.Print(p, rep, scope)
	}
	if err != nil {
		return err
	}
	return o.exit(rep)
}

func (o *ChurnOptions) exit(rep *churn.Report) error {
	return o.failOn.Exit(churn.Findings, rep.Findings())
}
