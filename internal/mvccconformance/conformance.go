package mvccconformance

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

// Config shapes a history.
type Config struct {
	// Seed makes the history reproducible.
	Seed uint64
	// Ops is the number of operations.
	Ops int
	// Keys is the size of the key pool (small pools give many recreates).
	Keys int
	// MaxWatchers caps the open watchers.
	MaxWatchers int
	// SyncEvery drains and compares the watchers every that many ops.
	SyncEvery int
	// WatchTimeout bounds how long the second engine's watchers may take to
	// deliver what the first engine's delivered.
	WatchTimeout time.Duration
}

// DefaultConfig returns a 10,000-operation history over 24 keys.
func DefaultConfig() Config {
	return Config{Seed: 1, Ops: 10000, Keys: 24, MaxWatchers: 8, SyncEvery: 500, WatchTimeout: 10 * time.Second}
}

// Stats counts what a history exercised.
type Stats struct {
	Ops, Puts, Deletes, Txns, TxnsSucceeded, Ranges, HistoricalReads, Compactions, Watches, WatchEvents int
	// ProgressRequests counts RequestProgress calls, Progress the progress
	// notifications checked on both engines.
	ProgressRequests, Progress int
	// Errors counts responses that were errors, by message.
	Errors map[string]int
	// FinalRevision is the revision after the last operation.
	FinalRevision int64
}

// Mismatch describes the first differing response.
type Mismatch struct {
	Step int
	Op   string
	Diff string
}

func (m *Mismatch) Error() string {
	return fmt.Sprintf("step %d (%s): engines differ (-first +second):\n%s", m.Step, m.Op, m.Diff)
}

type runner struct {
	cfg   Config
	rnd   *rand.Rand
	a, b  mvcc.WatchKV
	keys  []string
	stats Stats
	// what the first engine said lately, to aim compares and revisions
	rev, compacted int64
	watches        []*watchPair
}

type watchPair struct {
	desc         string
	a, b         mvcc.Watcher
	gotA, gotB   []flat
	progA, progB []int64
	// startRev is the first revision the watch delivers.
	startRev int64
	canceled bool
}

// flat is one watch outcome: an event or a cancellation.
type flat struct {
	Type            mvcc.EventType
	KV              mvcc.KeyValue
	PrevKV          *mvcc.KeyValue
	Canceled        bool
	CompactRevision int64
}

// Run runs one history on a then b, operation by operation, and returns
// the first mismatch as a *Mismatch error.
func Run(ctx context.Context, cfg Config, a, b mvcc.WatchKV) (Stats, error) {
	r := &runner{cfg: cfg, rnd: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), a: a, b: b}
	r.stats.Errors = map[string]int{}
	for i := range cfg.Keys {
		// Two prefixes so prefix ranges and deletes select subsets.
		p := "a/"
		if i%3 == 0 {
			p = "b/"
		}
		r.keys = append(r.keys, fmt.Sprintf("%s%02d", p, i))
	}
	slices.Sort(r.keys)
	cur, _, err := a.Rev(ctx)
	if err != nil {
		return r.stats, err
	}
	r.rev = cur
	defer func() {
		for _, w := range r.watches {
			_ = w.a.Close()
			_ = w.b.Close()
		}
	}()
	for step := range cfg.Ops {
		sctx, cancel := context.WithTimeout(ctx, cfg.WatchTimeout)
		err := r.step(sctx, step)
		cancel()
		if err != nil {
			return r.stats, err
		}
		if cfg.SyncEvery > 0 && (step+1)%cfg.SyncEvery == 0 {
			if err := r.syncWatches(ctx, step); err != nil {
				return r.stats, err
			}
		}
	}
	if err := r.syncWatches(ctx, cfg.Ops); err != nil {
		return r.stats, err
	}
	r.stats.FinalRevision = r.rev
	return r.stats, nil
}

var cmpOpts = []cmp.Option{cmpopts.EquateEmpty()}

// compare runs f on both engines and diffs the normalized results.
func compare[T any](r *runner, ctx context.Context, step int, desc string, f func(mvcc.WatchKV) (T, error), norm func(T) any) (T, error) {
	ra, ea := f(r.a)
	rb, eb := f(r.b)
	if ea != nil || eb != nil {
		if errText(ea) != errText(eb) {
			return ra, &Mismatch{Step: step, Op: desc, Diff: fmt.Sprintf("-error: %v\n+error: %v", ea, eb)}
		}
		r.stats.Errors[errText(ea)]++
		return ra, ea
	}
	na, nb := norm(ra), norm(rb)
	if d := cmp.Diff(na, nb, cmpOpts...); d != "" {
		return ra, &Mismatch{Step: step, Op: desc, Diff: d}
	}
	return ra, nil
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	for _, s := range []error{mvcc.ErrCompacted, mvcc.ErrFutureRev, mvcc.ErrEmptyKey, mvcc.ErrDuplicateKey, mvcc.ErrTooManyOps, mvcc.ErrEmptyWatcherRange} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return err.Error()
}

// Normal forms: headers reduced to their revision.
type nRange struct {
	Rev   int64
	KVs   []mvcc.KeyValue
	More  bool
	Count int64
}
type nPut struct {
	Rev    int64
	PrevKV *mvcc.KeyValue
}
type nDel struct {
	Rev     int64
	Deleted int64
	PrevKVs []mvcc.KeyValue
}
type nOp struct {
	Type  mvcc.OpType
	Range *nRange
	Put   *nPut
	Del   *nDel
}
type nTxn struct {
	Rev       int64
	Succeeded bool
	Ops       []nOp
}

func normRange(x *mvcc.RangeResult) *nRange {
	return &nRange{Rev: x.Header.Revision, KVs: x.KVs, More: x.More, Count: x.Count}
}
func normPut(x *mvcc.PutResult) *nPut { return &nPut{Rev: x.Header.Revision, PrevKV: x.PrevKV} }
func normDel(x *mvcc.DeleteResult) *nDel {
	return &nDel{Rev: x.Header.Revision, Deleted: x.Deleted, PrevKVs: x.PrevKVs}
}
func normTxn(x *mvcc.TxnResult) any {
	n := nTxn{Rev: x.Header.Revision, Succeeded: x.Succeeded}
	for _, o := range x.Responses {
		no := nOp{Type: o.Type}
		switch {
		case o.Range != nil:
			no.Range = normRange(o.Range)
		case o.Put != nil:
			no.Put = normPut(o.Put)
		case o.Delete != nil:
			no.Del = normDel(o.Delete)
		}
		n.Ops = append(n.Ops, no)
	}
	return n
}

func (r *runner) key() string { return r.keys[r.rnd.IntN(len(r.keys))] }

func (r *runner) value() []byte {
	if r.rnd.IntN(20) == 0 {
		return nil
	}
	return fmt.Appendf(nil, "v%d", r.rnd.IntN(1000))
}

// pickRev returns a revision around the interesting boundaries: 0
// (latest), below/at the compaction, in the past, current, future.
func (r *runner) pickRev() int64 {
	switch r.rnd.IntN(8) {
	case 0:
		return 0
	case 1:
		return r.compacted - 1 + int64(r.rnd.IntN(3))
	case 2:
		return r.rev + 1 + int64(r.rnd.IntN(2))
	case 3:
		return r.rev
	default:
		lo := max(r.compacted, 1)
		if r.rev <= lo {
			return lo
		}
		return lo + r.rnd.Int64N(r.rev-lo+1)
	}
}

// pickEnd returns a range end: single key, prefix, a key range, or from-key.
func (r *runner) pickEnd(key string) string {
	switch r.rnd.IntN(6) {
	case 0, 1, 2:
		return ""
	case 3:
		return mvcc.PrefixEnd(key[:2])
	case 4:
		return "\x00"
	default:
		return r.key()
	}
}

func (r *runner) rangeOpts() mvcc.RangeOptions {
	o := mvcc.RangeOptions{Rev: r.pickRev()}
	if r.rnd.IntN(3) == 0 {
		o.Limit = int64(r.rnd.IntN(4))
	}
	o.KeysOnly = r.rnd.IntN(6) == 0
	o.CountOnly = r.rnd.IntN(8) == 0
	return o
}

func (r *runner) randomOp(allowRange bool) mvcc.Op {
	k := r.key()
	n := 3
	if !allowRange {
		n = 2
	}
	switch r.rnd.IntN(n) {
	case 0:
		return mvcc.OpPutKV(k, r.value(), mvcc.PutOptions{PrevKV: r.rnd.IntN(2) == 0})
	case 1:
		end := r.pickEnd(k)
		if end == "\x00" {
			// etcd's duplicate-key check takes a "\x00" end literally, so a
			// txn may delete a key through a from-key range and put it again
			// in the same revision. A compaction at exactly that revision
			// then makes etcd v3.6.8 drop the live value from its backend
			// while its index keeps it, and the next read of the key kills
			// etcd ("range failed to find revision pair"; reproduced by
			// TestEtcdRecreateInOneTxnThenCompact in pkg/mvcc).
			// Keep such deletes out of txns.
			end = mvcc.PrefixEnd(k[:2])
		}
		return mvcc.OpDel(k, mvcc.DeleteOptions{End: end, PrevKV: r.rnd.IntN(2) == 0})
	default:
		o := r.rangeOpts()
		o.End = r.pickEnd(k)
		return mvcc.OpGet(k, o)
	}
}

func (r *runner) randomCompare() mvcc.Compare {
	res := mvcc.CompareResult(r.rnd.IntN(4))
	c := mvcc.Compare{Key: r.key(), Result: res, Target: mvcc.CompareTarget(r.rnd.IntN(4))}
	if r.rnd.IntN(10) == 0 {
		c.End = r.pickEnd(c.Key)
	}
	switch c.Target {
	case mvcc.CompareValue:
		c.Value = r.value()
	case mvcc.CompareVersion:
		c.Int = int64(r.rnd.IntN(6))
	default:
		// Aim at real revisions: 0 (missing) or a recent one.
		if r.rnd.IntN(3) == 0 {
			c.Int = 0
		} else {
			c.Int = max(r.rev-int64(r.rnd.IntN(30)), 0)
		}
	}
	return c
}

func (r *runner) aimedCompare(ctx context.Context) mvcc.Compare {
	// An optimistic-concurrency guard on the key's real mod revision, as
	// Kubernetes writes: If(ModRevision(key) == expected).
	k := r.key()
	c := mvcc.ModRevision(k, mvcc.Equal, 0)
	if res, err := r.a.Range(ctx, k, mvcc.RangeOptions{}); err == nil && len(res.KVs) == 1 {
		c.Int = res.KVs[0].ModRevision
		if r.rnd.IntN(4) == 0 {
			c.Int-- // a stale read
		}
	}
	return c
}

// step runs one random operation on both engines.
func (r *runner) step(ctx context.Context, step int) error {
	r.stats.Ops++
	switch p := r.rnd.IntN(100); {
	case p < 25:
		return r.put(ctx, step)
	case p < 33:
		return r.del(ctx, step)
	case p < 60:
		return r.txn(ctx, step)
	case p < 90:
		return r.get(ctx, step)
	case p < 93:
		return r.compact(ctx, step)
	case p < 98:
		return r.watch(ctx, step)
	default:
		return r.progress(ctx, step)
	}
}

func (r *runner) put(ctx context.Context, step int) error {
	k, v := r.key(), r.value()
	if r.rnd.IntN(200) == 0 {
		k = "" // ErrEmptyKey
	}
	opts := mvcc.PutOptions{PrevKV: r.rnd.IntN(2) == 0}
	r.stats.Puts++
	res, err := compare(r, ctx, step, fmt.Sprintf("put %s %q", k, v), func(e mvcc.WatchKV) (*mvcc.PutResult, error) {
		return e.Put(ctx, k, v, opts)
	}, func(x *mvcc.PutResult) any { return normPut(x) })
	if err := r.fatal(err); err != nil {
		return err
	}
	if res != nil {
		r.rev = res.Header.Revision
	}
	return nil
}

func (r *runner) del(ctx context.Context, step int) error {
	k := r.key()
	opts := mvcc.DeleteOptions{End: r.pickEnd(k), PrevKV: r.rnd.IntN(2) == 0}
	r.stats.Deletes++
	res, err := compare(r, ctx, step, fmt.Sprintf("del %s %q", k, opts.End), func(e mvcc.WatchKV) (*mvcc.DeleteResult, error) {
		return e.DeleteRange(ctx, k, opts)
	}, func(x *mvcc.DeleteResult) any { return normDel(x) })
	if err := r.fatal(err); err != nil {
		return err
	}
	if res != nil {
		r.rev = res.Header.Revision
	}
	return nil
}

// randomTxn returns a txn of random compares and operations, now and then
// one that etcd refuses (too many operations, an empty key).
func (r *runner) randomTxn(ctx context.Context) mvcc.Txn {
	t := mvcc.Txn{}
	if r.rnd.IntN(2) == 0 {
		t.Compare = append(t.Compare, r.aimedCompare(ctx))
	}
	for range r.rnd.IntN(3) {
		t.Compare = append(t.Compare, r.randomCompare())
	}
	for range r.rnd.IntN(4) {
		t.Success = append(t.Success, r.randomOp(true))
	}
	for range r.rnd.IntN(3) {
		t.Failure = append(t.Failure, r.randomOp(true))
	}
	switch r.rnd.IntN(200) {
	case 0:
		for range mvcc.MaxTxnOps + 1 - len(t.Success) { // ErrTooManyOps
			t.Success = append(t.Success, mvcc.OpGet(r.key(), mvcc.RangeOptions{}))
		}
	case 1:
		t.Compare = append(t.Compare, mvcc.Version("", mvcc.Equal, 0)) // ErrEmptyKey
	}
	return t
}

func (r *runner) txn(ctx context.Context, step int) error {
	t := r.randomTxn(ctx)
	r.stats.Txns++
	res, err := compare(r, ctx, step, fmt.Sprintf("txn %+v", t), func(e mvcc.WatchKV) (*mvcc.TxnResult, error) {
		return e.Txn(ctx, t)
	}, normTxn)
	if err := r.fatal(err); err != nil {
		return err
	}
	if res != nil {
		r.rev = res.Header.Revision
		if res.Succeeded {
			r.stats.TxnsSucceeded++
		}
	}
	return nil
}

func (r *runner) get(ctx context.Context, step int) error {
	k := r.key()
	o := r.rangeOpts()
	o.End = r.pickEnd(k)
	r.stats.Ranges++
	if o.Rev != 0 && o.Rev < r.rev {
		r.stats.HistoricalReads++
	}
	_, err := compare(r, ctx, step, fmt.Sprintf("get %s %+v", k, o), func(e mvcc.WatchKV) (*mvcc.RangeResult, error) {
		return e.Range(ctx, k, o)
	}, func(x *mvcc.RangeResult) any { return normRange(x) })
	return r.fatal(err)
}

// compact compacts around the compaction boundary or to a recent revision,
// after comparing the watches (a compaction cancels watches behind it).
func (r *runner) compact(ctx context.Context, step int) error {
	rev := r.compacted - 1 + r.rnd.Int64N(max(r.rev-r.compacted, 0)+3)
	if r.rnd.IntN(2) == 0 {
		rev = r.rev - int64(r.rnd.IntN(50))
	}
	r.stats.Compactions++
	if err := r.syncWatches(ctx, step); err != nil {
		return err
	}
	_, err := compare(r, ctx, step, fmt.Sprintf("compact %d", rev), func(e mvcc.WatchKV) (*mvcc.CompactResult, error) {
		return e.Compact(ctx, rev)
	}, func(x *mvcc.CompactResult) any { return x.Header.Revision })
	if err := r.fatal(err); err != nil {
		return err
	}
	if err == nil {
		r.compacted = rev
	}
	return nil
}

// fatal keeps mismatches and failures to reach an engine, and lets the
// errors both engines agreed on through.
func (r *runner) fatal(err error) error {
	var m *Mismatch
	if errors.As(err, &m) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func (r *runner) watch(ctx context.Context, step int) error {
	if len(r.watches) >= r.cfg.MaxWatchers {
		i := r.rnd.IntN(len(r.watches))
		w := r.watches[i]
		if err := r.syncWatch(ctx, step, w); err != nil {
			return err
		}
		_ = w.a.Close()
		_ = w.b.Close()
		r.watches = slices.Delete(r.watches, i, i+1)
	}
	k := r.key()
	o := mvcc.WatchOptions{End: r.pickEnd(k), PrevKV: r.rnd.IntN(2) == 0}
	switch r.rnd.IntN(4) {
	case 0:
	case 1:
		o.Rev = r.rev + 1
	default:
		o.Rev = r.pickRev()
	}
	if o.Rev < 0 {
		o.Rev = 0
	}
	wa, errA := r.a.Watch(ctx, k, o)
	wb, errB := r.b.Watch(ctx, k, o)
	if errA != nil || errB != nil {
		if errText(errA) != errText(errB) {
			return &Mismatch{Step: step, Op: fmt.Sprintf("watch %s %+v", k, o), Diff: fmt.Sprintf("-error: %v\n+error: %v", errA, errB)}
		}
		r.stats.Errors[errText(errA)]++
		return nil
	}
	r.stats.Watches++
	w := &watchPair{desc: fmt.Sprintf("watch %s %+v (step %d)", k, o, step), a: wa, b: wb, startRev: o.Rev}
	if o.Rev <= 0 {
		w.startRev = r.rev + 1
	}
	r.watches = append(r.watches, w)
	// etcd catches a watcher from the past up in the background (every
	// 100ms); a compaction before that cancels it. Wait, so the history
	// does not depend on timing.
	if o.Rev > 0 && o.Rev <= r.rev {
		if s, ok := wb.(interface{ WaitSynced(context.Context) error }); ok {
			wctx, cancel := context.WithTimeout(ctx, r.cfg.WatchTimeout)
			defer cancel()
			if err := s.WaitSynced(wctx); err != nil {
				return fmt.Errorf("%s: waiting for the watch to catch up: %w", w.desc, err)
			}
		}
	}
	return r.syncWatch(ctx, step, w)
}

// flatten turns responses into events and cancellations, and collects the
// revisions of progress notifications apart: a real etcd may add progress
// responses of its own (WaitSynced asks for them).
func flatten(rs []mvcc.WatchResponse, progress *[]int64) []flat {
	var out []flat
	for _, r := range rs {
		if r.IsProgressNotify() {
			*progress = append(*progress, r.Header.Revision)
			continue
		}
		for _, ev := range r.Events {
			out = append(out, flat{Type: ev.Type, KV: ev.KV, PrevKV: ev.PrevKV})
		}
		if r.Canceled || r.CompactRevision != 0 {
			out = append(out, flat{Canceled: r.Canceled, CompactRevision: r.CompactRevision})
		}
	}
	return out
}

func (r *runner) syncWatches(ctx context.Context, step int) error {
	for _, w := range r.watches {
		if err := r.syncWatch(ctx, step, w); err != nil {
			return err
		}
	}
	return nil
}

// syncWatch waits until b's watcher delivered as much as a's, then
// compares the two streams.
func (r *runner) syncWatch(ctx context.Context, step int, w *watchPair) error {
	w.gotA = append(w.gotA, flatten(w.a.Drain(), &w.progA)...)
	deadline := time.Now().Add(r.cfg.WatchTimeout)
	for {
		w.gotB = append(w.gotB, flatten(w.b.Drain(), &w.progB)...)
		if len(w.gotB) >= len(w.gotA) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	if d := cmp.Diff(w.gotA, w.gotB, cmpOpts...); d != "" {
		return &Mismatch{Step: step, Op: w.desc, Diff: d}
	}
	r.stats.WatchEvents += len(w.gotA)
	for _, f := range w.gotA {
		w.canceled = w.canceled || f.Canceled
	}
	w.gotA, w.gotB = nil, nil
	return nil
}

// progress requests a progress notification from both engines. Every
// watch that is not canceled and does not wait for a future revision must
// get exactly one carrying the current revision from the first engine, and
// one from the second (which may send more: see flatten).
func (r *runner) progress(ctx context.Context, step int) error {
	if err := r.syncWatches(ctx, step); err != nil {
		return err
	}
	for _, w := range r.watches {
		w.progA, w.progB = nil, nil
	}
	if err := r.a.RequestProgress(ctx); err != nil {
		return err
	}
	if err := r.b.RequestProgress(ctx); err != nil {
		return err
	}
	r.stats.ProgressRequests++
	for _, w := range r.watches {
		eligible := !w.canceled && r.rev >= w.startRev
		var want []int64
		if eligible {
			want = []int64{r.rev}
		}
		if evs := flatten(w.a.Drain(), &w.progA); len(evs) > 0 {
			return &Mismatch{Step: step, Op: "progress " + w.desc, Diff: fmt.Sprintf("events after a progress request: %+v", evs)}
		}
		if d := cmp.Diff(want, w.progA, cmpOpts...); d != "" {
			return &Mismatch{Step: step, Op: "progress " + w.desc, Diff: "first engine's progress notifications (-want +got):\n" + d}
		}
		if !eligible {
			continue
		}
		deadline := time.Now().Add(r.cfg.WatchTimeout)
		for !slices.Contains(w.progB, r.rev) {
			if time.Now().After(deadline) {
				return &Mismatch{Step: step, Op: "progress " + w.desc, Diff: fmt.Sprintf("second engine sent no progress notification at %d (got %v)", r.rev, w.progB)}
			}
			time.Sleep(2 * time.Millisecond)
			if evs := flatten(w.b.Drain(), &w.progB); len(evs) > 0 {
				return &Mismatch{Step: step, Op: "progress " + w.desc, Diff: fmt.Sprintf("second engine sent events after a progress request: %+v", evs)}
			}
		}
		r.stats.Progress++
		w.progA, w.progB = nil, nil
	}
	return nil
}
