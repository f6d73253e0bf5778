package simulate

// This file holds `kubectl rv simulate etcdctl`. NewCmdSimulate
// (simulate.go) registers it: cmd.AddCommand(newCmdSimulateEtcdctl(f, streams)).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/etcdclient"
	"github.com/kubectl-rv/kubectl-rv/pkg/etcdplay"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/etcdprint"
)

// SimulateEtcdctlOptions are the options of kubectl rv simulate etcdctl.
type SimulateEtcdctlOptions struct {
	WriteOut      string
	EtcdEndpoints []string
	Filename      string
	Args          []string

	format   etcdprint.Format
	commands []etcdplay.Command
	// single is set when one command came from the arguments; source
	// names the script the commands were read from otherwise.
	single bool
	source string
	newKV  func(ctx context.Context) (mvcc.WatchKV, error)
	genericiooptions.IOStreams
}

// newCmdSimulateEtcdctl returns kubectl rv simulate etcdctl.
func newCmdSimulateEtcdctl(_ *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &SimulateEtcdctlOptions{WriteOut: string(etcdprint.Simple), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "etcdctl [COMMAND ARGS...]",
		Short: "Run etcdctl commands on the embedded etcd-exact store (or a real etcd)",
		Long: `Run etcdctl-style commands on the simulator's embedded revision store, which follows
etcd's MVCC semantics exactly: one global revision, create/mod revision and version per
key, txns with compares, ranges at past revisions, compaction and its errors, watches.

With arguments, runs one command. Without, reads a script from stdin (or --filename):
one command per line; "txn" is followed by etcdctl's txn syntax (compares, a blank line,
success requests, a blank line, failure requests, a blank line). Watches started by a
script print their events after each later command. Lines starting with # are comments.
Lines take etcdctl's syntax, so a transcript pastes as is: an optional leading "etcdctl",
and -w/--write-out anywhere on a line sets that line's output format.

Commands:
  ` + strings.Join(func() []string {
			var u []string
			for _, k := range etcdplay.Kinds() {
				u = append(u, etcdplay.Usage(k))
			}
			return u
		}(), "\n  ") + `

Output is etcdctl's: its default simple format, or -w json with the same shape
(header with cluster_id/member_id/revision/raft_term, base64 keys and values).
With --etcd-endpoints the same commands run on a real etcd instead.

Docs: docs/simulate-etcdctl.md`,
		Example: `  # How etcd numbers revisions: put, overwrite, delete, read the past, recreate
  printf 'put k1 a\nput k2 b\nput k1 c\ndel k1\nget k1 --rev=2\nput k1 d\nget k1\n' | kubectl rv simulate etcdctl -w json

  # One command, etcdctl's JSON
  kubectl rv simulate etcdctl -w json put k1 v1

  # Optimistic concurrency the way Kubernetes writes: create only if absent
  printf 'txn\nmod("k1") = "0"\n\nput k1 created\n\nget k1\n\n' | kubectl rv simulate etcdctl

  # Watch from a revision while writing
  printf 'watch --prefix /registry/ --rev 1\nput /registry/a 1\ndel /registry/a\n' | kubectl rv simulate etcdctl

  # The same script against a real etcd
  kubectl rv simulate etcdctl --etcd-endpoints http://127.0.0.1:2379 -f script.txt`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Args = args
			if err := o.Complete(); err != nil {
				return escapeErr(err)
			}
			if err := o.Validate(); err != nil {
				return escapeErr(err)
			}
			return escapeErr(o.Run(c.Context()))
		},
	}
	// etcdctl's own flags (--rev, --prefix, ...) follow the command name.
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVarP(&o.WriteOut, "write-out", "w", o.WriteOut, "Output format: simple (etcdctl's default) or json.")
	cmdutil.SetFlagValues(cmd.Flags(), "write-out", "simple", "json")
	cmd.Flags().StringSliceVar(&o.EtcdEndpoints, "etcd-endpoints", nil, "Run on a real etcd at these client URLs instead of the embedded store.")
	cmd.Flags().StringVarP(&o.Filename, "filename", "f", "", "Read the script (or a txn's body) from this file instead of stdin.")
	return cmd
}

// extractGlobal takes -w/--write-out and --etcd-endpoints given after the
// etcdctl command name, where etcdctl users put them.
func (o *SimulateEtcdctlOptions) extractGlobal(args []string) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		var dst *string
		var list bool
		switch name {
		case "-w", "--write-out":
			dst = &o.WriteOut
		case "--etcd-endpoints":
			list = true
		default:
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, exitcode.Usagef("%s needs a value", name)
			}
			i++
			val = args[i]
		}
		if list {
			o.EtcdEndpoints = append(o.EtcdEndpoints, strings.Split(val, ",")...)
		} else {
			*dst = val
		}
	}
	return rest, nil
}

// Complete parses the command or reads and parses the script.
func (o *SimulateEtcdctlOptions) Complete() error {
	args, err := o.extractGlobal(o.Args)
	if err != nil {
		return err
	}
	input := func() (string, io.Reader, func(), error) {
		if o.Filename == "" || o.Filename == "-" {
			return "stdin", o.In, func() {}, nil
		}
		fh, err := os.Open(o.Filename)
		if err != nil {
			return "", nil, nil, exitcode.Usagef("--filename: %w", err)
		}
		return o.Filename, fh, func() { _ = fh.Close() }, nil
	}
	if len(args) > 0 {
		o.single = true
		c, err := etcdplay.ParseArgs("args", args)
		if err != nil {
			return exitcode.Usage(err)
		}
		if c.Kind == etcdplay.Txn {
			name, r, done, err := input()
			if err != nil {
				return err
			}
			defer done()
			if c.Txn, err = etcdplay.ParseTxnBody(name, r); err != nil {
				return exitcode.Usage(err)
			}
		}
		o.commands = []etcdplay.Command{c}
	} else {
		name, r, done, err := input()
		if err != nil {
			return err
		}
		defer done()
		if o.commands, err = etcdplay.ParseScript(name, r); err != nil {
			if errors.Is(err, etcdplay.ErrSyntax) {
				return exitcode.Usage(err)
			}
			return err
		}
		o.source = name
	}
	if len(o.EtcdEndpoints) > 0 {
		endpoints := o.EtcdEndpoints
		o.newKV = func(ctx context.Context) (mvcc.WatchKV, error) {
			c, err := etcdclient.New(ctx, etcdclient.Config{Endpoints: endpoints})
			if err != nil {
				return nil, exitcode.Cluster(fmt.Errorf("--etcd-endpoints: %w", err))
			}
			return c, nil
		}
	} else {
		o.newKV = func(context.Context) (mvcc.WatchKV, error) { return mvcc.NewDefault(), nil }
	}
	return nil
}

// Validate checks the flags and the parsed commands without I/O.
func (o *SimulateEtcdctlOptions) Validate() error {
	f, err := etcdprint.ParseFormat(o.WriteOut)
	if err != nil {
		return exitcode.Usage(err)
	}
	o.format = f
	for _, e := range o.EtcdEndpoints {
		if !strings.HasPrefix(e, "http://") && !strings.HasPrefix(e, "https://") {
			return exitcode.Usagef("--etcd-endpoints: %q is not a URL: want e.g. http://127.0.0.1:2379", e)
		}
	}
	for _, c := range o.commands {
		cf := f
		if c.WriteOut != "" {
			if cf, err = etcdprint.ParseFormat(c.WriteOut); err != nil {
				return exitcode.Usagef("%s: %v", c.Source, err)
			}
		}
		if c.Kind == etcdplay.Get && c.Range.CountOnly && cf != etcdprint.JSON {
			return exitcode.Usagef("%s: get --count-only prints only with -w json (etcdctl allows it only with --write-out=fields)", c.Source)
		}
	}
	if len(o.commands) == 0 {
		if o.source != "" && o.source != "stdin" {
			return exitcode.Usagef("%s: no command in the script (only blank lines and # comments): write one command per line, e.g. put k1 v1", o.source)
		}
		return exitcode.Usagef("no command given: pass one as arguments (e.g. put k1 v1) or a script on stdin")
	}
	return nil
}

// Run runs the commands, printing like etcdctl.
func (o *SimulateEtcdctlOptions) Run(ctx context.Context) error {
	kv, err := o.newKV(ctx)
	if err != nil {
		return err
	}
	defer kv.Close()
	p := &etcdprint.Printer{Format: o.format, Out: o.Out, ErrOut: o.ErrOut}
	r := &etcdplay.Runner{KV: kv, Emit: p.Print}
	defer r.Close()
	if len(o.EtcdEndpoints) > 0 {
		// A real etcd delivers watch events asynchronously: let the
		// watches catch up before their events are printed.
		r.Settle = etcdplay.SettleWatch
	}
	// etcdctl watch alone streams until interrupted, on a real etcd.
	var followEvery time.Duration
	if o.single && len(o.EtcdEndpoints) > 0 {
		followEvery = 50 * time.Millisecond
	}
	err = r.RunAll(ctx, o.commands, followEvery)
	var ce *etcdplay.CommandError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, etcdclient.ErrUnreachable), errors.As(err, &ce) && errors.Is(err, context.DeadlineExceeded):
		return exitcode.Cluster(err)
	case errors.As(err, &ce):
		p.PrintError(err)
		return exitcode.SilentFinding()
	}
	return err
}
