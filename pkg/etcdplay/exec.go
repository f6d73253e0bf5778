package etcdplay

import (
	"context"
	"fmt"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

// Result is the outcome of one command, or one batch of watch responses.
// Exactly one of the result fields is set.
type Result struct {
	Command *Command
	Range   *mvcc.RangeResult
	Put     *mvcc.PutResult
	Delete  *mvcc.DeleteResult
	Txn     *mvcc.TxnResult
	Compact *mvcc.CompactResult
	// Watch holds responses delivered to a watch started by Command.
	Watch []mvcc.WatchResponse
}

// CommandError is an etcd error answering a command (ErrCompacted, ...).
type CommandError struct {
	Command *Command
	Err     error
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("%s: %s: %v", e.Command.Source, e.Command.Kind, e.Err)
}

// Unwrap returns the etcd error.
func (e *CommandError) Unwrap() error { return e.Err }

// Runner runs commands on one store and keeps the watches they start.
// After every command it hands the watches' new responses to Emit, so the
// output interleaves like a terminal running etcdctl watch beside
// etcdctl put, but deterministically.
type Runner struct {
	KV mvcc.WatchKV
	// Emit receives each result in order.
	Emit func(Result) error
	// Settle, if set, is called on each watch before it is drained; an
	// asynchronous engine waits there for its events to arrive.
	Settle func(ctx context.Context, w mvcc.Watcher)

	watches []watch
}

type watch struct {
	cmd *Command
	w   mvcc.Watcher
}

// RunAll is the playground's one entry: it runs cmds in order, stopping at
// the first error, then, when followEvery is positive and a watch is open,
// follows the watches (Follow) until ctx is done, as etcdctl watch does.
func (r *Runner) RunAll(ctx context.Context, cmds []Command, followEvery time.Duration) error {
	for i := range cmds {
		if err := r.Run(ctx, &cmds[i]); err != nil {
			return err
		}
	}
	if followEvery > 0 && r.Watching() {
		return r.Follow(ctx, followEvery)
	}
	return nil
}

// Run runs one command and then drains the watches.
func (r *Runner) Run(ctx context.Context, c *Command) error {
	res := Result{Command: c}
	var err error
	switch c.Kind {
	case Put:
		res.Put, err = r.KV.Put(ctx, c.Key, c.Value, c.Put)
	case Get:
		res.Range, err = r.KV.Range(ctx, c.Key, c.Range)
	case Del:
		res.Delete, err = r.KV.DeleteRange(ctx, c.Key, c.Delete)
	case Txn:
		res.Txn, err = r.KV.Txn(ctx, c.Txn)
	case Compact:
		res.Compact, err = r.KV.Compact(ctx, c.Rev)
	case Watch:
		var w mvcc.Watcher
		w, err = r.KV.Watch(ctx, c.Key, c.Watch)
		if err == nil {
			r.watches = append(r.watches, watch{cmd: c, w: w})
			return r.drain(ctx, true)
		}
	}
	if err != nil {
		return &CommandError{Command: c, Err: err}
	}
	if err := r.Emit(res); err != nil {
		return err
	}
	return r.drain(ctx, true)
}

// Drain emits the responses the watches received since the last call,
// without waiting for them to settle.
func (r *Runner) Drain() error { return r.drain(context.Background(), false) }

func (r *Runner) drain(ctx context.Context, settle bool) error {
	for _, w := range r.watches {
		if settle && r.Settle != nil {
			r.Settle(ctx, w.w)
		}
		if rs := w.w.Drain(); len(rs) > 0 {
			if err := r.Emit(Result{Command: w.cmd, Watch: rs}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Watching reports whether a watch is open.
func (r *Runner) Watching() bool { return len(r.watches) > 0 }

// Close closes the watches.
func (r *Runner) Close() {
	for _, w := range r.watches {
		_ = w.w.Close()
	}
	r.watches = nil
}

// Follow emits the watches' responses every interval until ctx is done:
// etcdctl watch streams until interrupted. A watch whose engine reports
// that its stream ended (Err, a real etcd gone away) ends it with that
// error, as a *CommandError.
func (r *Runner) Follow(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := r.Drain(); err != nil {
				return err
			}
			for _, w := range r.watches {
				if e, ok := w.w.(interface{ Err() error }); ok && e.Err() != nil {
					return &CommandError{Command: w.cmd, Err: e.Err()}
				}
			}
		}
	}
}

// SettleWatch waits up to 300ms for an asynchronous engine's watch (a real
// etcd's) to catch up, so its events print after the command that caused
// them. Watches of the embedded store have nothing to wait for.
func SettleWatch(ctx context.Context, w mvcc.Watcher) {
	s, ok := w.(interface{ WaitSynced(context.Context) error })
	if !ok {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_ = s.WaitSynced(sctx)
}
