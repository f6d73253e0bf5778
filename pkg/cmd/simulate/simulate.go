package simulate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/etcdclient"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/simprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules/crd"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// NewCmdSimulate returns kubectl rv simulate: with no arguments it runs the
// two-clients scenario and tells what happened step by step.
func NewCmdSimulate(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &SimulateRunOptions{Output: cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML), IOStreams: streams, Builtin: "two-clients", story: true, Rules: crd.Rules{}}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Simulate optimistic concurrency offline: 409s, retries, lost updates, SSA fights, leader election, 410 Gone",
		Long: `Simulate Kubernetes clients racing on shared objects, offline and in virtual time.

An embedded revision store with etcd's exact semantics sits under the API server's
write path (resourceVersion = mod_revision, 409 Conflict, no-op writes, generation,
the status subresource, the four patch types, managedFields and server-side apply).
Scenarios describe objects and actors; the same seed gives byte-identical output.

With no subcommand, runs the two-clients scenario and prints what happened step by step.

Docs: docs/simulate.md`,
		Example: `  # Watch two clients race: 409 Conflict, re-read, success
  kubectl rv simulate

  # List the built-in scenarios
  kubectl rv simulate list

  # Compare client-go's DefaultRetry and DefaultBackoff, with a picture
  kubectl rv simulate run --builtin retry-storm --report storm.html

  # A built-in scenario's report as JSON
  kubectl rv simulate run --builtin lost-update -o json`,
		Args: cobra.NoArgs,
		// Offline, or on the etcd --etcd-endpoints names: never the kubeconfig's cluster.
		Annotations: map[string]string{cmdutil.AnnotationNoKubeconfig: "true"},
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return escapeErr(o.Run(c.Context()))
		},
	}
	cmd.Flags().Var(seedFlag{&o.Seed}, "seed", "Seed of the run (default: the scenario's).")
	o.Output.AddFlags(cmd.Flags())
	cmd.AddCommand(newCmdSimulateRun(f, streams), newCmdSimulateList(streams), newCmdSimulateEtcdctl(f, streams))
	return cmd
}

// SimulateRunOptions are the options of kubectl rv simulate run.
type SimulateRunOptions struct {
	File          string
	Builtin       string
	Seed          int64
	Report        string
	Steps         bool
	EtcdEndpoints []string
	// Keep leaves the run's keys in the etcd of --etcd-endpoints.
	Keep   bool
	Output *cmdutil.OutputFlags
	// Rules are the API server's rules the run's write path runs.
	Rules writepath.Rules

	now func() time.Time

	story bool
	genericiooptions.IOStreams
}

func newCmdSimulateRun(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &SimulateRunOptions{Output: cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML), IOStreams: streams, Rules: crd.Rules{}}
	cmd := &cobra.Command{
		Use:   "run (FILE | - | --builtin NAME)",
		Short: "Run a scenario file or a built-in scenario and report per actor",
		Long: `Run a scenario in virtual time and report, per actor: operations, attempts, successes,
no-ops, 409 conflicts, apply conflicts, 422s, other errors, give-ups, the retries histogram,
latency p50/p95/p99 (virtual time), revisions consumed and lost updates found by invariants.
An invariant holds only when at least one write to its object succeeded.

--report FILE.html or FILE.svg writes a static picture: every client over virtual time
with successes and conflicts marked, the invariants and the lost updates, and the latency
distribution of each actor.

FILE - reads the scenario from standard input. The built-in scenarios (kubectl rv simulate
list) are examples to start from.

Docs: docs/simulate.md (the scenario files' format)`,
		Example: `  # A built-in scenario with another seed
  kubectl rv simulate run --builtin lost-update --seed 7

  # A built-in scenario, with the picture
  kubectl rv simulate run --builtin lost-update --report lost-update.svg

  # Your own scenario file (the format is in docs/simulate.md)
  kubectl rv simulate run my-scenario.yaml

  # Every request, step by step
  kubectl rv simulate run --builtin ssa-fight --steps

  # The same store operations on a real etcd (this writes to it; the run's keys are
  # deleted afterwards unless --keep)
  kubectl rv simulate run --builtin two-clients --steps --etcd-endpoints http://127.0.0.1:2379`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.File = args[0]
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return escapeErr(o.Run(c.Context()))
		},
	}
	cmd.Flags().StringVar(&o.Builtin, "builtin", "", "Name of a built-in scenario (see kubectl rv simulate list).")
	_ = cmd.RegisterFlagCompletionFunc("builtin", cmdutil.BuiltinScenarioCompletion)
	cmd.Flags().Var(seedFlag{&o.Seed}, "seed", "Seed of the run (default: the scenario's seed).")
	cmd.Flags().StringVar(&o.Report, "report", "", "Also write a picture of the run to this .html or .svg file.")
	cmd.Flags().BoolVar(&o.Steps, "steps", false, "Print every request of the run before the summary (table output).")
	cmd.Flags().StringSliceVar(&o.EtcdEndpoints, "etcd-endpoints", nil, "Run the store operations on a real etcd at these client URLs instead of the embedded store. This writes to that etcd: keys under /kubectl-rv/simulate/<scenario>/<time>/, deleted after the run unless --keep; compaction is not run.")
	cmd.Flags().BoolVar(&o.Keep, "keep", false, "With --etcd-endpoints, leave the run's keys in that etcd (they are deleted after the run by default).")
	o.Output.AddFlags(cmd.Flags())
	return cmd
}

// Validate checks the flags.
func (o *SimulateRunOptions) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	if (o.File == "") == (o.Builtin == "") {
		return exitcode.Usagef("give a scenario FILE or --builtin NAME (one of them)")
	}
	for _, e := range o.EtcdEndpoints {
		if !strings.HasPrefix(e, "http://") && !strings.HasPrefix(e, "https://") {
			return exitcode.Usagef("--etcd-endpoints: %q is not a URL: want e.g. http://127.0.0.1:2379", e)
		}
	}
	if o.Keep && len(o.EtcdEndpoints) == 0 {
		return exitcode.Usagef("--keep keeps the keys of a run on a real etcd: add --etcd-endpoints")
	}
	return cmdutil.ValidateReport(o.Report)
}

func (o *SimulateRunOptions) load(ctx context.Context) (*scenario.Scenario, error) {
	if o.Builtin != "" {
		sc, err := scenario.LoadBuiltin(o.Builtin)
		if err != nil {
			return nil, exitcode.Usage(fmt.Errorf("--builtin: %w", err))
		}
		return sc, nil
	}
	sc, err := scenario.LoadFile(ctx, o.File, o.In)
	if err != nil {
		return nil, exitcode.Usage(err)
	}
	return sc, nil
}

// escapedError is an error whose message quotes input files (a scenario,
// a recording, an etcdctl script): its terminal control characters are
// escaped line by line, so that a kind holding "ESC]0;title BEL" cannot
// retitle the terminal when main prints it. It unwraps to the original, so
// exitcode.Classify still sees the marks.
type escapedError struct{ err error }

func (e escapedError) Error() string {
	lines := strings.Split(e.err.Error(), "\n")
	for i, l := range lines {
		lines[i] = text.Escape(l)
	}
	return strings.Join(lines, "\n")
}

func (e escapedError) Unwrap() error { return e.err }

// escapeErr wraps err in an escapedError (nil stays nil).
func escapeErr(err error) error {
	if err == nil {
		return nil
	}
	return escapedError{err}
}

// seedFlag is --seed: an int64 whose error says what a seed is, instead of
// strconv's "parsing "abc": invalid syntax".
type seedFlag struct{ p *int64 }

func (s seedFlag) String() string {
	if s.p == nil {
		return "0"
	}
	return strconv.FormatInt(*s.p, 10)
}

func (s seedFlag) Set(v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return errors.New("the seed is an integer, such as 7")
	}
	*s.p = n
	return nil
}

func (s seedFlag) Type() string { return "int" }

// Run runs the scenario and prints the report.
func (o *SimulateRunOptions) Run(ctx context.Context) error {
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	sc, err := o.load(ctx)
	if err != nil {
		return err
	}
	cfg, closeKV, err := o.config(ctx, sc)
	if err != nil {
		return err
	}
	defer closeKV()
	res, err := simulate.Run(ctx, sc, cfg)
	if err != nil {
		if errors.Is(err, simulate.ErrScenario) {
			return exitcode.Usage(fmt.Errorf("%s: %w", o.source(), err))
		}
		return fmt.Errorf("simulating %s: %w", o.source(), err)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(o.ErrOut, "Note: %s\n", n)
	}
	if err := o.writeReport(res); err != nil {
		return err
	}
	return o.print(p, res)
}

// config is the run's configuration: tracing when something shows the
// steps, and a real etcd under a fresh key prefix with --etcd-endpoints.
// closeKV deletes the run's keys from that etcd (unless --keep) and closes
// the connection.
func (o *SimulateRunOptions) config(ctx context.Context, sc *scenario.Scenario) (cfg simulate.Config, closeKV func(), err error) {
	if o.story || o.Steps || o.Report != "" {
		t := true
		cfg.Trace = &t
	}
	cfg.Seed = o.Seed
	cfg.Rules = o.Rules
	if len(o.EtcdEndpoints) == 0 {
		return cfg, func() {}, nil
	}
	c, err := etcdclient.New(ctx, etcdclient.Config{Endpoints: o.EtcdEndpoints})
	if err != nil {
		return cfg, nil, exitcode.Cluster(fmt.Errorf("--etcd-endpoints: %w", err))
	}
	now := time.Now
	if o.now != nil {
		now = o.now
	}
	cfg.KV = c
	// A fresh prefix per run: a real etcd keeps the keys of earlier runs.
	cfg.KeyPrefix = fmt.Sprintf("/kubectl-rv/simulate/%s/%d", sc.Name, now().UnixNano())
	fmt.Fprintf(o.ErrOut, "Running on the etcd at %s under %s/\n", strings.Join(o.EtcdEndpoints, ","), cfg.KeyPrefix)
	prefix := cfg.KeyPrefix + "/"
	return cfg, func() {
		defer func() { _ = c.Close() }()
		if o.Keep {
			fmt.Fprintf(o.ErrOut, "Kept the run's keys under %s (--keep); etcdctl del --prefix %s deletes them\n", prefix, prefix)
			return
		}
		// Also after Ctrl-C: the keys are this run's litter.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		res, err := c.DeleteRange(dctx, prefix, mvcc.DeleteOptions{End: mvcc.PrefixEnd(prefix)})
		if err != nil {
			output.Warnf(o.ErrOut, "could not delete the run's keys under %s: %v", prefix, err)
			return
		}
		fmt.Fprintf(o.ErrOut, "Deleted the run's %s under %s (--keep keeps them)\n", text.Plural(int(res.Deleted), "key"), prefix)
	}, nil
}

// writeReport writes the --report picture.
func (o *SimulateRunOptions) writeReport(res *simulate.Result) error {
	if o.Report == "" {
		return nil
	}
	if err := cmdutil.WriteReport(o.Report, func() []byte { return simprint.SVG(res) }, func() []byte { return simprint.HTML(res) }); err != nil {
		return err
	}
	fmt.Fprintf(o.ErrOut, "Wrote the picture of the run to %s\n", o.Report)
	return nil
}

// print prints the report: the structured SimulationReport, or the story,
// the steps and the summary tables.
func (o *SimulateRunOptions) print(p *output.Printer, res *simulate.Result) error {
	if p.Structured() {
		if !o.Steps && !o.story {
			res.Steps = nil
		}
		return p.PrintObject(simprint.NewReport(res))
	}
	switch {
	case o.story:
		return simprint.PrintStory(p, res)
	case o.Steps:
		if err := simprint.PrintSteps(p, res); err != nil {
			return err
		}
		fmt.Fprintln(o.Out)
	}
	return simprint.PrintSummary(p, res)
}

func (o *SimulateRunOptions) source() string {
	if o.Builtin != "" {
		return "built-in scenario " + o.Builtin
	}
	if o.File == "-" {
		return "<stdin>"
	}
	return o.File
}

// SimulateListOptions are the options of kubectl rv simulate list.
type SimulateListOptions struct {
	Output *cmdutil.OutputFlags
	genericiooptions.IOStreams
}

func newCmdSimulateList(streams genericiooptions.IOStreams) *cobra.Command {
	o := &SimulateListOptions{Output: cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the built-in scenarios",
		Example: `  # Names and one-line descriptions
  kubectl rv simulate list

  # Full descriptions
  kubectl rv simulate list -o wide`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Output.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	o.Output.AddFlags(cmd.Flags())
	return cmd
}

// Run prints the list.
func (o *SimulateListOptions) Run(context.Context) error {
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	l := simprint.NewScenarioList(scenario.Builtins())
	if p.Structured() {
		return p.PrintObject(l)
	}
	return simprint.PrintList(p, l)
}
