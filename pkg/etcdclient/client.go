package etcdclient

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/metadata"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/mvcc"
)

// ErrUnreachable wraps every failure to reach the etcd endpoints.
var ErrUnreachable = errors.New("etcd is unreachable")

// Config configures a Client.
type Config struct {
	// Endpoints are the etcd client URLs, e.g. http://127.0.0.1:2379.
	Endpoints []string
	// DialTimeout bounds the first contact (default 5s).
	DialTimeout time.Duration
}

// Client runs the mvcc.WatchKV operations on a real etcd.
type Client struct {
	c *clientv3.Client
	// watchCtx is shared by every watch so they use one gRPC watch stream,
	// which RequestProgress addresses.
	watchCtx    context.Context
	watchCancel context.CancelFunc

	// mu guards compacted, watchers and nextID.
	mu sync.Mutex
	// watchers are the open watches by their client-side number.
	watchers map[int64]*watcher
	nextID   int64
	// compacted is the highest revision this client compacted to; etcd has
	// no API that tells the compacted revision.
	compacted int64
}

var _ mvcc.WatchKV = (*Client)(nil)

// New connects to etcd and checks that it answers.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.DialTimeout,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if _, err := c.Get(pctx, "\x00", clientv3.WithCountOnly()); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("%w at %v: %w", ErrUnreachable, cfg.Endpoints, err)
	}
	wctx, wcancel := context.WithCancel(context.Background())
	return &Client{c: c, watchCtx: wctx, watchCancel: wcancel, watchers: map[int64]*watcher{}}, nil
}

// Close stops the watches and closes the connection.
func (c *Client) Close() error {
	c.watchCancel()
	return c.c.Close()
}

// mapErr turns etcd's gRPC errors into the mvcc sentinels.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	switch rpctypes.ErrorDesc(err) {
	case rpctypes.ErrCompacted.Error():
		return mvcc.ErrCompacted
	case rpctypes.ErrFutureRev.Error():
		return mvcc.ErrFutureRev
	case rpctypes.ErrEmptyKey.Error():
		return mvcc.ErrEmptyKey
	case rpctypes.ErrDuplicateKey.Error():
		return mvcc.ErrDuplicateKey
	case rpctypes.ErrTooManyOps.Error():
		return mvcc.ErrTooManyOps
	}
	return err
}

func mapWatchErr(err error) error {
	if err == nil {
		return errors.New("etcd refused the watch")
	}
	if strings.Contains(err.Error(), mvcc.ErrEmptyWatcherRange.Error()) {
		return mvcc.ErrEmptyWatcherRange
	}
	return mapErr(err)
}

func header(h *etcdserverpb.ResponseHeader) mvcc.Header {
	if h == nil {
		return mvcc.Header{}
	}
	return mvcc.Header{ClusterID: h.ClusterId, MemberID: h.MemberId, Revision: h.Revision, RaftTerm: h.RaftTerm}
}

func keyValue(kv *mvccpb.KeyValue) mvcc.KeyValue {
	out := mvcc.KeyValue{
		Key:            string(kv.Key),
		CreateRevision: kv.CreateRevision,
		ModRevision:    kv.ModRevision,
		Version:        kv.Version,
		Lease:          kv.Lease,
	}
	if len(kv.Value) > 0 {
		out.Value = kv.Value
	}
	return out
}

func keyValues(in []*mvccpb.KeyValue) []mvcc.KeyValue {
	if len(in) == 0 {
		return nil
	}
	out := make([]mvcc.KeyValue, len(in))
	for i, kv := range in {
		out[i] = keyValue(kv)
	}
	return out
}

func getOp(key string, o mvcc.RangeOptions) clientv3.Op {
	var opts []clientv3.OpOption
	if o.End != "" {
		opts = append(opts, clientv3.WithRange(o.End))
	}
	if o.Rev != 0 {
		opts = append(opts, clientv3.WithRev(o.Rev))
	}
	if o.Limit != 0 {
		opts = append(opts, clientv3.WithLimit(o.Limit))
	}
	if o.KeysOnly {
		opts = append(opts, clientv3.WithKeysOnly())
	}
	if o.CountOnly {
		opts = append(opts, clientv3.WithCountOnly())
	}
	return clientv3.OpGet(key, opts...)
}

func putOp(key string, value []byte, o mvcc.PutOptions) clientv3.Op {
	var opts []clientv3.OpOption
	if o.PrevKV {
		opts = append(opts, clientv3.WithPrevKV())
	}
	return clientv3.OpPut(key, string(value), opts...)
}

func deleteOp(key string, o mvcc.DeleteOptions) clientv3.Op {
	var opts []clientv3.OpOption
	if o.End != "" {
		opts = append(opts, clientv3.WithRange(o.End))
	}
	if o.PrevKV {
		opts = append(opts, clientv3.WithPrevKV())
	}
	return clientv3.OpDelete(key, opts...)
}

func rangeResult(r *etcdserverpb.RangeResponse) *mvcc.RangeResult {
	return &mvcc.RangeResult{Header: header(r.Header), KVs: keyValues(r.Kvs), More: r.More, Count: r.Count}
}

func putResult(r *etcdserverpb.PutResponse) *mvcc.PutResult {
	out := &mvcc.PutResult{Header: header(r.Header)}
	if r.PrevKv != nil {
		kv := keyValue(r.PrevKv)
		out.PrevKV = &kv
	}
	return out
}

func deleteResult(r *etcdserverpb.DeleteRangeResponse) *mvcc.DeleteResult {
	return &mvcc.DeleteResult{Header: header(r.Header), Deleted: r.Deleted, PrevKVs: keyValues(r.PrevKvs)}
}

// Range reads key (or [key, opts.End)) at opts.Rev.
func (c *Client) Range(ctx context.Context, key string, opts mvcc.RangeOptions) (*mvcc.RangeResult, error) {
	r, err := c.c.Do(ctx, getOp(key, opts))
	if err != nil {
		return nil, mapErr(err)
	}
	return rangeResult((*etcdserverpb.RangeResponse)(r.Get())), nil
}

// Put writes key.
func (c *Client) Put(ctx context.Context, key string, value []byte, opts mvcc.PutOptions) (*mvcc.PutResult, error) {
	r, err := c.c.Do(ctx, putOp(key, value, opts))
	if err != nil {
		return nil, mapErr(err)
	}
	return putResult((*etcdserverpb.PutResponse)(r.Put())), nil
}

// DeleteRange deletes key (or [key, opts.End)).
func (c *Client) DeleteRange(ctx context.Context, key string, opts mvcc.DeleteOptions) (*mvcc.DeleteResult, error) {
	r, err := c.c.Do(ctx, deleteOp(key, opts))
	if err != nil {
		return nil, mapErr(err)
	}
	return deleteResult((*etcdserverpb.DeleteRangeResponse)(r.Del())), nil
}

var results = map[mvcc.CompareResult]string{mvcc.Equal: "=", mvcc.NotEqual: "!=", mvcc.Greater: ">", mvcc.Less: "<"}

func compare(c mvcc.Compare) clientv3.Cmp {
	var cmp clientv3.Cmp
	switch c.Target {
	case mvcc.CompareValue:
		cmp = clientv3.Compare(clientv3.Value(c.Key), results[c.Result], string(c.Value))
	case mvcc.CompareCreate:
		cmp = clientv3.Compare(clientv3.CreateRevision(c.Key), results[c.Result], c.Int)
	case mvcc.CompareMod:
		cmp = clientv3.Compare(clientv3.ModRevision(c.Key), results[c.Result], c.Int)
	default:
		cmp = clientv3.Compare(clientv3.Version(c.Key), results[c.Result], c.Int)
	}
	if c.End != "" {
		cmp = cmp.WithRange(c.End)
	}
	return cmp
}

func ops(in []mvcc.Op) []clientv3.Op {
	out := make([]clientv3.Op, len(in))
	for i, op := range in {
		switch op.Type {
		case mvcc.OpRange:
			out[i] = getOp(op.Key, op.Range)
		case mvcc.OpPut:
			out[i] = putOp(op.Key, op.Value, op.Put)
		case mvcc.OpDelete:
			out[i] = deleteOp(op.Key, op.Delete)
		}
	}
	return out
}

// Txn runs a transaction.
func (c *Client) Txn(ctx context.Context, t mvcc.Txn) (*mvcc.TxnResult, error) {
	cmps := make([]clientv3.Cmp, len(t.Compare))
	for i, cm := range t.Compare {
		cmps[i] = compare(cm)
	}
	r, err := c.c.Txn(ctx).If(cmps...).Then(ops(t.Success)...).Else(ops(t.Failure)...).Commit()
	if err != nil {
		return nil, mapErr(err)
	}
	out := &mvcc.TxnResult{Header: header(r.Header), Succeeded: r.Succeeded, Responses: make([]mvcc.OpResult, len(r.Responses))}
	for i, ro := range r.Responses {
		switch {
		case ro.GetResponseRange() != nil:
			out.Responses[i] = mvcc.OpResult{Type: mvcc.OpRange, Range: rangeResult(ro.GetResponseRange())}
		case ro.GetResponsePut() != nil:
			out.Responses[i] = mvcc.OpResult{Type: mvcc.OpPut, Put: putResult(ro.GetResponsePut())}
		case ro.GetResponseDeleteRange() != nil:
			out.Responses[i] = mvcc.OpResult{Type: mvcc.OpDelete, Delete: deleteResult(ro.GetResponseDeleteRange())}
		}
	}
	return out, nil
}

// Compact compacts physically (it returns once the history is gone).
func (c *Client) Compact(ctx context.Context, rev int64) (*mvcc.CompactResult, error) {
	r, err := c.c.Compact(ctx, rev, clientv3.WithCompactPhysical())
	if err != nil {
		return nil, mapErr(err)
	}
	c.mu.Lock()
	c.compacted = max(c.compacted, rev)
	c.mu.Unlock()
	return &mvcc.CompactResult{Header: header(r.Header)}, nil
}

// Rev returns the current revision and the highest revision this client
// compacted to.
func (c *Client) Rev(ctx context.Context) (current, compacted int64, err error) {
	r, err := c.c.Get(ctx, "\x00", clientv3.WithCountOnly())
	if err != nil {
		return 0, 0, mapErr(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return r.Header.Revision, c.compacted, nil
}

// RequestProgress asks etcd for a progress notification on every open
// watch; etcd answers on each watch that has caught up.
func (c *Client) RequestProgress(ctx context.Context) error {
	c.mu.Lock()
	ws := make([]*watcher, 0, len(c.watchers))
	for _, w := range c.watchers {
		ws = append(ws, w)
	}
	c.mu.Unlock()
	for _, w := range ws {
		w.mu.Lock()
		w.userPending++
		w.mu.Unlock()
		if err := c.c.RequestProgress(w.streamCtx); err != nil && w.ctx.Err() == nil {
			return mapErr(err)
		}
	}
	return nil
}

// Watch starts a watch and returns once etcd created it; a goroutine queues
// its responses until Close or the client's Close. Each watch gets a gRPC
// stream of its own, so a progress request answers for it alone.
func (c *Client) Watch(ctx context.Context, key string, opts mvcc.WatchOptions) (mvcc.Watcher, error) {
	var oo []clientv3.OpOption
	if opts.End != "" {
		oo = append(oo, clientv3.WithRange(opts.End))
	}
	if opts.Rev > 0 {
		oo = append(oo, clientv3.WithRev(opts.Rev))
	}
	if opts.PrevKV {
		oo = append(oo, clientv3.WithPrevKV())
	}
	if opts.ProgressNotify {
		oo = append(oo, clientv3.WithProgressNotify())
	}
	// Wait for the server to create the watch, so a watch from "now" sees
	// every write issued after Watch returns, as the embedded store's does.
	oo = append(oo, clientv3.WithCreatedNotify())
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	sctx := metadata.AppendToOutgoingContext(c.watchCtx, "kubectl-rv-watch", strconv.FormatInt(id, 10))
	wctx, cancel := context.WithCancel(sctx)
	w := &watcher{c: c, id: id, streamCtx: sctx, ctx: wctx, cancel: cancel, done: make(chan struct{}), created: make(chan struct{}), progressed: make(chan struct{}, 1)}
	ch := c.c.Watch(wctx, key, oo...)
	go w.loop(ch)
	if err := w.awaitCreated(ctx); err != nil {
		_ = w.Close()
		return nil, err
	}
	c.mu.Lock()
	c.watchers[id] = w
	c.mu.Unlock()
	return w, nil
}

type watcher struct {
	c         *Client
	id        int64
	streamCtx context.Context
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{}
	created   chan struct{}
	// progressed gets a token for each progress notification.
	progressed chan struct{}
	// err is the reason the server refused the watch; written before
	// created is closed.
	err error

	// mu guards the fields below.
	mu    sync.Mutex
	queue []mvcc.WatchResponse
	// syncing is set while WaitSynced runs: the progress notifications it
	// provokes are not queued. syncedRev is the revision of the last one.
	syncing   bool
	syncedRev int64
	// userPending counts progress notifications the caller asked for
	// (RequestProgress), which are queued.
	userPending int
}

// awaitCreated waits until etcd created the watch or refused it (w.err).
// loop closes created before done, and a refusal closes both at once: a
// caller that gets here late sees both closed, and select would pick one
// at random. So done only means "unreachable" when created is still open.
func (w *watcher) awaitCreated(ctx context.Context) error {
	select {
	case <-w.created:
	case <-w.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-w.created:
		return w.err
	default:
		return fmt.Errorf("%w: the watch stream closed", ErrUnreachable)
	}
}

func (w *watcher) loop(ch clientv3.WatchChan) {
	defer close(w.done)
	created, canceled := false, false
	for wr := range ch {
		if !created {
			// clientv3 answers a refused watch with a closing response
			// instead of the created one.
			if wr.Canceled || !wr.Created {
				w.err = mapWatchErr(wr.Err())
			}
			created = true
			close(w.created)
			if w.err != nil {
				return
			}
			continue
		}
		if canceled || (wr.Canceled && wr.CompactRevision == 0 && w.ctx.Err() != nil) {
			// clientv3 follows a cancellation, or our own Close, with a
			// closing response of its own.
			continue
		}
		canceled = wr.Canceled
		w.queueResponse(&wr, w.response(&wr))
	}
}

// response translates a clientv3 watch response.
func (w *watcher) response(wr *clientv3.WatchResponse) mvcc.WatchResponse {
	r := mvcc.WatchResponse{
		Header:          header(&wr.Header),
		WatchID:         w.id,
		CompactRevision: wr.CompactRevision,
		Canceled:        wr.Canceled,
	}
	if err := wr.Err(); err != nil && wr.Canceled && wr.CompactRevision == 0 {
		r.CancelReason = err.Error()
	}
	for _, ev := range wr.Events {
		e := mvcc.Event{Type: mvcc.EventType(ev.Type), KV: keyValue(ev.Kv)}
		if ev.PrevKv != nil {
			p := keyValue(ev.PrevKv)
			e.PrevKV = &p
		}
		r.Events = append(r.Events, e)
	}
	return r
}

// queueResponse queues r for Drain, except the progress notifications
// that WaitSynced provoked.
func (w *watcher) queueResponse(wr *clientv3.WatchResponse, r mvcc.WatchResponse) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wr.IsProgressNotify() {
		switch {
		case w.syncing:
			// Asked for by WaitSynced, not by the caller.
			w.syncedRev = wr.Header.Revision
			select {
			case w.progressed <- struct{}{}:
			default:
			}
			return
		case w.userPending > 0:
			w.userPending--
		case wr.Header.Revision <= w.syncedRev:
			// A late answer to one of WaitSynced's retries.
			return
		}
	}
	w.queue = append(w.queue, r)
}

// WaitSynced returns once etcd has caught this watch up with the current
// revision (it answers a progress request only then). The progress
// notifications it provokes are not queued. etcd catches a watch
// from the past up in the background, and a compaction before that cancels
// it; the conformance test waits, so its histories do not depend on timing.
// A watch waiting for a future revision never reports progress: do not
// wait on one.
func (w *watcher) WaitSynced(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	w.mu.Lock()
	w.syncing = true
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.syncing = false
		w.mu.Unlock()
	}()
	for {
		select {
		case <-w.progressed:
		default:
		}
		if err := w.c.c.RequestProgress(w.streamCtx); err != nil {
			return mapErr(err)
		}
		select {
		case <-w.progressed:
			return nil
		case <-w.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// ID returns the client's number for the watch (clientv3 does not expose
// the server's watch ID).
func (w *watcher) ID() int64 { return w.id }

// Drain returns the responses received so far.
func (w *watcher) Drain() []mvcc.WatchResponse {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.queue
	w.queue = nil
	return q
}

// Close cancels the watch and waits for its goroutine.
func (w *watcher) Close() error {
	w.cancel()
	<-w.done
	w.c.mu.Lock()
	delete(w.c.watchers, w.id)
	w.c.mu.Unlock()
	return nil
}
