package etcdclient

import (
	"errors"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

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
