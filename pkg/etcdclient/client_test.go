package etcdclient

import (
	"context"
	"errors"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/mvcc"
)

// TestMapErr checks that etcd's client errors become the mvcc sentinels
// (the calls themselves are tested against a real etcd in test/e2e).
func TestMapErr(t *testing.T) {
	tests := []struct {
		in   error
		want error
	}{
		{rpctypes.ErrCompacted, mvcc.ErrCompacted},
		{rpctypes.ErrGRPCCompacted, mvcc.ErrCompacted},
		{rpctypes.ErrFutureRev, mvcc.ErrFutureRev},
		{rpctypes.ErrEmptyKey, mvcc.ErrEmptyKey},
		{rpctypes.ErrDuplicateKey, mvcc.ErrDuplicateKey},
		{rpctypes.ErrTooManyOps, mvcc.ErrTooManyOps},
	}
	for _, tt := range tests {
		if got := mapErr(tt.in); !errors.Is(got, tt.want) {
			t.Errorf("mapErr(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	other := errors.New("etcdserver: request timed out")
	if got := mapErr(other); got != other {
		t.Errorf("mapErr(%v) = %v, want it unchanged", other, got)
	}
	if got := mapWatchErr(errors.New("mvcc: watcher range is empty")); !errors.Is(got, mvcc.ErrEmptyWatcherRange) {
		t.Errorf("mapWatchErr: %v", got)
	}
}

// TestRefusedWatchIsNotUnreachable: when etcd refuses a watch, loop closes
// created and then done. A Watch call that looks only after both closed
// (the goroutine was descheduled, as under load) must still report the
// refusal, not "the watch stream closed" (issue 13's flaky conformance
// run: the embedded store said "watcher range is empty", etcd
// "unreachable").
func TestRefusedWatchIsNotUnreachable(t *testing.T) {
	for range 200 {
		ch := make(chan clientv3.WatchResponse, 1)
		// A refusal without a reason reads as ErrFutureRev.
		ch <- clientv3.WatchResponse{Canceled: true}
		close(ch)
		w := &watcher{c: &Client{watchers: map[int64]*watcher{}}, cancel: func() {}, done: make(chan struct{}), created: make(chan struct{})}
		w.loop(ch)
		if err := w.awaitCreated(context.Background()); !errors.Is(err, mvcc.ErrFutureRev) {
			t.Fatalf("awaitCreated = %v, want the refusal (%v)", err, mvcc.ErrFutureRev)
		}
	}
}
