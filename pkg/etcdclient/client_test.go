package etcdclient

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

// TestMapErr checks that etcd's error statuses become the mvcc sentinels
// (the calls themselves are tested against a real etcd in test/e2e). The
// messages come from etcd's own rpctypes, so a change there fails here.
func TestMapErr(t *testing.T) {
	tests := []struct {
		in   error
		want error
	}{
		{rpctypes.ErrCompacted, mvcc.ErrCompacted},
		{rpctypes.ErrFutureRev, mvcc.ErrFutureRev},
		{rpctypes.ErrEmptyKey, mvcc.ErrEmptyKey},
		{rpctypes.ErrDuplicateKey, mvcc.ErrDuplicateKey},
		{rpctypes.ErrTooManyOps, mvcc.ErrTooManyOps},
	}
	for _, tt := range tests {
		st := &StatusError{Code: 11, Message: tt.in.Error()}
		if got := mapErr(st); !errors.Is(got, tt.want) {
			t.Errorf("mapErr(%v) = %v, want %v", st, got, tt.want)
		}
		if got := watchErr(tt.in.Error()); !errors.Is(got, tt.want) {
			t.Errorf("watchErr(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	other := &StatusError{Code: 14, Message: "etcdserver: request timed out"}
	if got := mapErr(other); got != error(other) {
		t.Errorf("mapErr(%v) = %v, want it unchanged", other, got)
	}
	if got := watchErr("mvcc: watcher range is empty"); !errors.Is(got, mvcc.ErrEmptyWatcherRange) {
		t.Errorf("watchErr: %v", got)
	}
	if got := watchErr(""); !errors.Is(got, mvcc.ErrFutureRev) {
		t.Errorf("watchErr without a reason = %v, want %v", got, mvcc.ErrFutureRev)
	}
}

// responses returns a next function for watcher.read that hands out rs,
// then io.EOF.
func responses(rs ...watchResponse) func() (*watchResponse, error) {
	return func() (*watchResponse, error) {
		if len(rs) == 0 {
			return nil, io.EOF
		}
		r := rs[0]
		rs = rs[1:]
		return &r, nil
	}
}

func newTestWatcher() *watcher {
	return &watcher{id: 7, c: &Client{watchers: map[int64]*watcher{}}, ctx: context.Background(), cancel: func() {}, done: make(chan struct{}), created: make(chan struct{}), progressed: make(chan struct{}, 1)}
}

// TestRefusedWatchIsNotUnreachable: when etcd refuses a watch, read closes
// created and then done. A Watch call that looks only after both closed
// (the goroutine was descheduled, as under load) must still report the
// refusal, not "the watch stream closed" (issue 13's flaky conformance
// run: the embedded store said "watcher range is empty", etcd
// "unreachable").
func TestRefusedWatchIsNotUnreachable(t *testing.T) {
	for range 200 {
		w := newTestWatcher()
		// A refusal without a reason reads as ErrFutureRev.
		w.read(responses(watchResponse{Created: true, WatchResponse: mvcc.WatchResponse{Canceled: true, WatchID: -1}}))
		close(w.done)
		if err := w.awaitCreated(context.Background()); !errors.Is(err, mvcc.ErrFutureRev) {
			t.Fatalf("awaitCreated = %v, want the refusal (%v)", err, mvcc.ErrFutureRev)
		}
	}
}

// TestWatchStream: the created response is not queued; events and
// progress notifications are, with the client's number for the watch; a
// compaction's cancellation is the last response queued; a stream that
// ends before etcd created the watch says why.
func TestWatchStream(t *testing.T) {
	w := newTestWatcher()
	ev := mvcc.Event{Type: mvcc.EventPut, KV: mvcc.KeyValue{Key: "k", ModRevision: 5, CreateRevision: 5, Version: 1, Value: []byte("v")}}
	w.read(responses(
		watchResponse{Created: true, WatchResponse: mvcc.WatchResponse{WatchID: 0, Header: mvcc.Header{Revision: 4}}},
		watchResponse{WatchResponse: mvcc.WatchResponse{WatchID: 0, Header: mvcc.Header{Revision: 5}, Events: []mvcc.Event{ev}}},
		watchResponse{WatchResponse: mvcc.WatchResponse{WatchID: -1, Header: mvcc.Header{Revision: 5}}},
		watchResponse{WatchResponse: mvcc.WatchResponse{WatchID: 0, Header: mvcc.Header{Revision: 9}, CompactRevision: 8, Canceled: true}},
		watchResponse{WatchResponse: mvcc.WatchResponse{WatchID: 0, Header: mvcc.Header{Revision: 9}}},
	))
	got := w.Drain()
	if len(got) != 3 {
		t.Fatalf("queued %d responses, want 3: %+v", len(got), got)
	}
	for _, r := range got {
		if r.WatchID != 7 {
			t.Errorf("watch ID %d, want the client's 7", r.WatchID)
		}
	}
	if len(got[0].Events) != 1 || got[0].Events[0].KV.Key != "k" || !got[1].IsProgressNotify() || got[2].CompactRevision != 8 || got[2].CancelReason != "" {
		t.Errorf("responses: %+v", got)
	}

	if err := w.Err(); err != nil {
		t.Errorf("Err before the stream's end: %v", err)
	}
	close(w.done)
	if err := w.Err(); err != nil {
		t.Errorf("Err after a compaction: %v", err)
	}

	// etcd goes away after creating the watch: Err says so, once the
	// stream has ended.
	gone := newTestWatcher()
	rs := responses(watchResponse{Created: true})
	gone.read(func() (*watchResponse, error) {
		if r, err := rs(); err == nil {
			return r, nil
		}
		return nil, &StatusError{Code: 14, Message: "etcdserver: server stopped"}
	})
	close(gone.done)
	if err := gone.Err(); !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "server stopped") {
		t.Errorf("Err after etcd ended the stream = %v", err)
	}

	cut := newTestWatcher()
	cut.read(func() (*watchResponse, error) { return nil, &StatusError{Code: 14, Message: "etcdserver: no leader"} })
	close(cut.done)
	if err := cut.awaitCreated(context.Background()); err == nil || err.Error() != "etcdserver: no leader" {
		t.Errorf("a stream ended before created: %v", err)
	}
}
