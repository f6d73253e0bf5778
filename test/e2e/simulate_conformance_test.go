//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/etcdclient"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/mvcc"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/mvcc/conformance"
)

// startEtcd runs a private, empty etcd (the control plane's binary) on free
// loopback ports with a temporary data dir, stopped at the end of the test.
// The control plane's etcd is not used: its history is not empty and other
// tests write to it.
func startEtcd(t *testing.T) string {
	t.Helper()
	port := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", port())
	peer := fmt.Sprintf("http://127.0.0.1:%d", port())
	dir := t.TempDir()
	log, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(cluster.BinDir, "etcd"),
		"--name", "conformance", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "conformance="+peer, "--unsafe-no-fsync")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting etcd: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = log.Close()
		if t.Failed() {
			if b, err := os.ReadFile(log.Name()); err == nil {
				lines := strings.Split(string(b), "\n")
				t.Logf("etcd log tail:\n%s", strings.Join(lines[max(0, len(lines)-20):], "\n"))
			}
		}
	})
	return client
}

func connectEtcd(t *testing.T, endpoint string) *etcdclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		c, err := etcdclient.New(ctx, etcdclient.Config{Endpoints: []string{endpoint}, DialTimeout: 2 * time.Second})
		if err == nil {
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
		if ctx.Err() != nil {
			t.Fatalf("etcd at %s did not come up: %v", endpoint, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSimulateConformance runs seeded random histories of 10,000 operations
// (puts, txns with compares on mod/create revision, version and value,
// deletes and recreates, ranges at past revisions with limits, compactions
// and their errors, watches from past, current and future revisions)
// against the embedded store and a real etcd, and requires identical
// responses: revisions, create/mod revision, version, values, counts and
// errors, and identical watch event streams.
func TestSimulateConformance(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			etcd := connectEtcd(t, startEtcd(t))
			embedded := mvcc.NewDefault()
			defer embedded.Close()
			ctx := context.Background()
			if cur, _, err := etcd.Rev(ctx); err != nil || cur != 1 {
				t.Fatalf("fresh etcd at revision %d (%v), want 1", cur, err)
			}
			cfg := conformance.DefaultConfig()
			cfg.Seed = seed
			stats, err := conformance.Run(ctx, cfg, embedded, etcd)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", stats)
			// The history must have exercised what it claims to.
			for name, n := range map[string]int{
				"puts": stats.Puts, "deletes": stats.Deletes, "succeeded txns": stats.TxnsSucceeded,
				"failed txns": stats.Txns - stats.TxnsSucceeded, "historical reads": stats.HistoricalReads,
				"compactions": stats.Compactions, "watch events": stats.WatchEvents,
				"ErrCompacted": stats.Errors[mvcc.ErrCompacted.Error()], "ErrFutureRev": stats.Errors[mvcc.ErrFutureRev.Error()],
			} {
				if n < 100 {
					t.Errorf("only %d %s in %d operations", n, name, stats.Ops)
				}
			}
			if stats.Ops < 10000 {
				t.Errorf("%d operations, want at least 10000", stats.Ops)
			}
		})
	}
}
