package etcdclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

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
		w.requestProgress()
	}
	return nil
}

// Watch starts a watch and returns once etcd created it; a goroutine queues
// its responses until Close or the client's Close. Each watch has a gRPC
// stream of its own, so a progress request answers for it alone.
func (c *Client) Watch(ctx context.Context, key string, opts mvcc.WatchOptions) (mvcc.Watcher, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	wctx, cancel := context.WithCancel(c.watchCtx)
	w := &watcher{c: c, id: id, ctx: wctx, cancel: cancel, done: make(chan struct{}), created: make(chan struct{}), progressed: make(chan struct{}, 1)}
	var e enc
	encodeWatchCreate(&e, key, opts)
	go w.run(e.b)
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
	c      *Client
	id     int64
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	// created is closed once etcd answered the create request.
	created chan struct{}
	// progressed gets a token for each progress notification.
	progressed chan struct{}
	// err is the reason etcd refused the watch, or why its stream ended
	// before that; written before created or done is closed.
	err error
	// endErr is why the stream of a created watch ended, other than Close
	// or a compaction; written before done is closed.
	endErr error
	// s is the watch's stream, set before created is closed.
	s *stream

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
// run closes created before done, and a refusal closes both at once: a
// caller that gets here late sees both closed, and select would pick one
// at random. So done only means "the stream ended" when created is still
// open.
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
		if w.err != nil {
			return w.err
		}
		return fmt.Errorf("%w: the watch stream closed", ErrUnreachable)
	}
}

// run opens the watch's stream with the create request and reads it until
// it ends.
func (w *watcher) run(create []byte) {
	defer close(w.done)
	s, err := w.c.conn.openStream(w.ctx, "/etcdserverpb.Watch/Watch", create)
	if err != nil {
		w.err = err
		return
	}
	defer s.resp.Body.Close()
	defer s.end(io.EOF)
	w.s = s
	w.read(func() (*watchResponse, error) {
		msg, err := s.recv()
		if err != nil {
			return nil, err
		}
		var wr watchResponse
		if err := decode(msg, func(d *dec) { decodeWatchResponse(d, &wr) }); err != nil {
			return nil, fmt.Errorf("etcd's watch response: %w", err)
		}
		return &wr, nil
	})
}

// read handles the stream's responses, from next, until it ends: the
// first answers the create request; a cancellation (a compacted watch) is
// the last.
func (w *watcher) read(next func() (*watchResponse, error)) {
	created := false
	for {
		wr, err := next()
		if err != nil {
			switch {
			case !created && !errors.Is(err, io.EOF):
				w.err = err
			case created && w.ctx.Err() == nil && errors.Is(err, ErrUnreachable):
				w.endErr = fmt.Errorf("the watch stream ended: %w", err)
			case created && w.ctx.Err() == nil:
				w.endErr = fmt.Errorf("%w: the watch stream ended: %w", ErrUnreachable, err)
			}
			return
		}
		if !created {
			if wr.Canceled || !wr.Created {
				w.err = watchErr(wr.CancelReason)
			}
			created = true
			close(w.created)
			if w.err != nil {
				return
			}
			continue
		}
		w.queueResponse(w.response(wr))
		if wr.Canceled {
			// etcd cancelled the watch (a compaction): it sends nothing
			// more, and the stream ends here, as clientv3's channel did.
			return
		}
	}
}

// response is wr with the client's number for the watch, and a reason
// only for a cancellation that is not a compaction's (etcd gives none for
// a future revision; clientv3 reads that as ErrFutureRev, and so does
// this).
func (w *watcher) response(wr *watchResponse) mvcc.WatchResponse {
	r := wr.WatchResponse
	r.WatchID = w.id
	switch {
	case r.CompactRevision != 0:
		r.CancelReason = ""
	case r.Canceled && r.CancelReason == "":
		r.CancelReason = "etcdserver: mvcc: required revision is a future revision"
	}
	return r
}

// queueResponse queues r for Drain, except the progress notifications
// that WaitSynced provoked.
func (w *watcher) queueResponse(r mvcc.WatchResponse) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r.IsProgressNotify() {
		switch {
		case w.syncing:
			// Asked for by WaitSynced, not by the caller.
			w.syncedRev = r.Header.Revision
			select {
			case w.progressed <- struct{}{}:
			default:
			}
			return
		case w.userPending > 0:
			w.userPending--
		case r.Header.Revision <= w.syncedRev:
			// A late answer to one of WaitSynced's retries.
			return
		}
	}
	w.queue = append(w.queue, r)
}

// requestProgress sends a progress request on the watch's stream.
func (w *watcher) requestProgress() {
	var e enc
	encodeWatchProgress(&e)
	w.s.send(e.b)
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
		w.requestProgress()
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

// Err returns why the watch's stream ended, once it has, if not by Close
// or a compaction: etcd went away, or ended the stream with an error. A
// follower of the watch stops on it rather than wait for events that will
// not come (this client does not reconnect).
func (w *watcher) Err() error {
	select {
	case <-w.done:
		return w.endErr
	default:
		return nil
	}
}

// ID returns the client's number for the watch.
func (w *watcher) ID() int64 { return w.id }

// Drain returns the responses received so far.
func (w *watcher) Drain() []mvcc.WatchResponse {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.queue
	w.queue = nil
	return q
}

// Close ends the watch's stream and waits for its goroutine.
func (w *watcher) Close() error {
	w.cancel()
	<-w.done
	w.c.mu.Lock()
	delete(w.c.watchers, w.id)
	w.c.mu.Unlock()
	return nil
}
