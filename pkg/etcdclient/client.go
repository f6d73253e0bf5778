package etcdclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

// ErrUnreachable wraps every failure to reach the etcd endpoints.
var ErrUnreachable = errors.New("etcd is unreachable")

// Config configures a Client.
type Config struct {
	// Endpoints are the etcd client URLs, e.g. http://127.0.0.1:2379; the
	// client uses the first that answers.
	Endpoints []string
	// DialTimeout bounds the first contact (default 5s).
	DialTimeout time.Duration
}

// Client runs the mvcc.WatchKV operations on a real etcd.
type Client struct {
	conn *conn
	// watchCtx is the parent of every watch's stream; Close ends them.
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

// New connects to the first endpoint that answers a count-only range.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if len(cfg.Endpoints) == 0 {
		return nil, fmt.Errorf("%w: no endpoint given", ErrUnreachable)
	}
	var errs []error
	for _, ep := range cfg.Endpoints {
		cn, err := newConn(ep, cfg.DialTimeout)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
		}
		c := &Client{conn: cn, watchers: map[int64]*watcher{}}
		pctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
		_, err = c.Range(pctx, "\x00", mvcc.RangeOptions{CountOnly: true})
		cancel()
		if err == nil {
			c.watchCtx, c.watchCancel = context.WithCancel(context.Background())
			return c, nil
		}
		cn.close()
		errs = append(errs, err)
	}
	err := errors.Join(errs...)
	if !errors.Is(err, ErrUnreachable) {
		// etcd answered, but not as it should (an error status).
		err = fmt.Errorf("%w at %v: %w", ErrUnreachable, cfg.Endpoints, err)
	}
	return nil, err
}

// Close stops the watches and closes the connection.
func (c *Client) Close() error {
	c.watchCancel()
	c.conn.close()
	return nil
}

// statusErrors are etcd's messages for the errors the embedded store
// shares (etcd's api/v3rpc/rpctypes).
var statusErrors = map[string]error{
	"etcdserver: mvcc: required revision has been compacted":   mvcc.ErrCompacted,
	"etcdserver: mvcc: required revision is a future revision": mvcc.ErrFutureRev,
	"etcdserver: key is not provided":                          mvcc.ErrEmptyKey,
	"etcdserver: duplicate key given in txn request":           mvcc.ErrDuplicateKey,
	"etcdserver: too many operations in txn request":           mvcc.ErrTooManyOps,
}

// mapErr turns etcd's error statuses into the mvcc sentinels.
func mapErr(err error) error {
	var st *StatusError
	if errors.As(err, &st) {
		if sentinel, ok := statusErrors[st.Message]; ok {
			return sentinel
		}
	}
	return err
}

// watchErr is the error of a watch etcd refused with reason; etcd gives
// none for a watch from a future revision.
func watchErr(reason string) error {
	switch {
	case reason == "":
		return mvcc.ErrFutureRev
	case strings.Contains(reason, mvcc.ErrEmptyWatcherRange.Error()):
		return mvcc.ErrEmptyWatcherRange
	}
	if sentinel, ok := statusErrors[reason]; ok {
		return sentinel
	}
	return fmt.Errorf("etcd refused the watch: %s", reason)
}

// call runs one unary method: encode writes the request, decode reads the
// response.
func (c *Client) call(ctx context.Context, method string, encode func(*enc), decodeFn func(*dec)) error {
	var e enc
	encode(&e)
	msg, err := c.conn.unary(ctx, method, e.b)
	if err != nil {
		return mapErr(err)
	}
	if err := decode(msg, decodeFn); err != nil {
		return fmt.Errorf("etcd's answer to %s: %w", method, err)
	}
	return nil
}

// Range reads key (or [key, opts.End)) at opts.Rev.
func (c *Client) Range(ctx context.Context, key string, opts mvcc.RangeOptions) (*mvcc.RangeResult, error) {
	r := &mvcc.RangeResult{}
	if err := c.call(ctx, "/etcdserverpb.KV/Range", func(e *enc) { encodeRange(e, key, opts) }, func(d *dec) { decodeRangeResponse(d, r) }); err != nil {
		return nil, err
	}
	return r, nil
}

// Put writes key.
func (c *Client) Put(ctx context.Context, key string, value []byte, opts mvcc.PutOptions) (*mvcc.PutResult, error) {
	r := &mvcc.PutResult{}
	if err := c.call(ctx, "/etcdserverpb.KV/Put", func(e *enc) { encodePut(e, key, value, opts) }, func(d *dec) { decodePutResponse(d, r) }); err != nil {
		return nil, err
	}
	return r, nil
}

// DeleteRange deletes key (or [key, opts.End)).
func (c *Client) DeleteRange(ctx context.Context, key string, opts mvcc.DeleteOptions) (*mvcc.DeleteResult, error) {
	r := &mvcc.DeleteResult{}
	if err := c.call(ctx, "/etcdserverpb.KV/DeleteRange", func(e *enc) { encodeDelete(e, key, opts) }, func(d *dec) { decodeDeleteResponse(d, r) }); err != nil {
		return nil, err
	}
	return r, nil
}

// Txn runs a transaction.
func (c *Client) Txn(ctx context.Context, t mvcc.Txn) (*mvcc.TxnResult, error) {
	r := &mvcc.TxnResult{}
	if err := c.call(ctx, "/etcdserverpb.KV/Txn", func(e *enc) { encodeTxn(e, t) }, func(d *dec) { decodeTxnResponse(d, r) }); err != nil {
		return nil, err
	}
	if r.Responses == nil {
		r.Responses = []mvcc.OpResult{}
	}
	return r, nil
}

// Compact compacts physically (it returns once the history is gone).
func (c *Client) Compact(ctx context.Context, rev int64) (*mvcc.CompactResult, error) {
	r := &mvcc.CompactResult{}
	if err := c.call(ctx, "/etcdserverpb.KV/Compact", func(e *enc) { encodeCompaction(e, rev) }, func(d *dec) { decodeCompactionResponse(d, r) }); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.compacted = max(c.compacted, rev)
	c.mu.Unlock()
	return r, nil
}

// Rev returns the current revision and the highest revision this client
// compacted to.
func (c *Client) Rev(ctx context.Context) (current, compacted int64, err error) {
	r, err := c.Range(ctx, "\x00", mvcc.RangeOptions{CountOnly: true})
	if err != nil {
		return 0, 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return r.Header.Revision, c.compacted, nil
}
