package mvccconformance

import (
	"context"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

// TestEmbeddedIsDeterministic runs one history on two embedded stores: any
// dependence on map order, time or shared state shows up as a mismatch.
// The comparison with a real etcd is test/e2e/simulate_conformance_test.go.
func TestEmbeddedIsDeterministic(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Ops = 3000
	cfg.Seed = 7
	a, b := mvcc.NewDefault(), mvcc.NewDefault()
	stats, err := Run(context.Background(), cfg, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Compactions == 0 || stats.WatchEvents == 0 || stats.Progress == 0 || stats.Errors[mvcc.ErrCompacted.Error()] == 0 {
		t.Errorf("the history exercised too little: %+v", stats)
	}
}

// TestMismatchIsReported checks that the harness catches a difference: the
// second store starts one revision ahead.
func TestMismatchIsReported(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Ops = 100
	a, b := mvcc.NewDefault(), mvcc.NewDefault()
	if _, err := b.Put(context.Background(), "zz", nil, mvcc.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), cfg, a, b)
	var m *Mismatch
	if err == nil || !asMismatch(err, &m) {
		t.Fatalf("error %v, want a *Mismatch", err)
	}
}

func asMismatch(err error, m **Mismatch) bool {
	mm, ok := err.(*Mismatch)
	*m = mm
	return ok
}
