//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/internal/mvccconformance"
	"github.com/kubectl-rv/kubectl-rv/pkg/etcdclient"
	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
	"github.com/kubectl-rv/kubectl-rv/test/e2e/framework"
)

// startEtcd runs a private, empty etcd (the control plane's binary) on free
// loopback ports with a temporary data dir, stopped at the end of the test.
// The control plane's etcd is not used: its history is not empty and other
// tests write to it.
func startEtcd(t testing.TB) string {
	t.Helper()
	// Two free ports below Linux's ephemeral range (32768-60999), as
	// hack/local-cluster.sh picks them: a port from that range can be taken
	// by any outgoing connection between its check and etcd's bind, and two
	// Listens on ":0" may return the same port once the first is closed
	// (etcd then fails with "address already in use"). Both listeners are
	// held until both ports are chosen, and closed before etcd starts.
	// The ports are held until etcd has bound them (framework.HoldPorts).
	defer framework.HoldPorts()()
	var ports []int
	var listeners []net.Listener
	for tries := 0; len(ports) < 2; tries++ {
		if tries == 1000 {
			t.Fatal("no free loopback port in 20000-31999")
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000)))
		if err != nil {
			continue
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range listeners {
		_ = l.Close()
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
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
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.Dial("tcp", strings.TrimPrefix(client, "http://"))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd did not listen on %s within 30 s: %v", client, err)
		}
	}
	return client
}

func connectEtcd(t testing.TB, endpoint string) *etcdclient.Client {
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
// errors, identical watch event streams, and progress notifications at the
// current revision on every caught-up watch.
func TestSimulateConformance(t *testing.T) {
	t.Parallel() // see TestMain: waits on its planes, not the CPU
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			t.Parallel() // each seed has its own etcd
			etcd := connectEtcd(t, startEtcd(t))
			embedded := mvcc.NewDefault()
			defer embedded.Close()
			ctx := context.Background()
			if cur, _, err := etcd.Rev(ctx); err != nil || cur != 1 {
				t.Fatalf("fresh etcd at revision %d (%v), want 1", cur, err)
			}
			cfg := mvccconformance.DefaultConfig()
			cfg.Seed = seed
			stats, err := mvccconformance.Run(ctx, cfg, embedded, etcd)
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
				"progress notifications": stats.Progress,
			} {
				if n < 100 {
					t.Errorf("only %d %s in %d operations", n, name, stats.Ops)
				}
			}
			for _, e := range []error{mvcc.ErrDuplicateKey, mvcc.ErrEmptyKey, mvcc.ErrTooManyOps, mvcc.ErrEmptyWatcherRange} {
				if stats.Errors[e.Error()] == 0 {
					t.Errorf("no %q in %d operations", e, stats.Ops)
				}
			}
			if stats.Ops < 10000 {
				t.Errorf("%d operations, want at least 10000", stats.Ops)
			}
		})
	}
}

// The same operation streams on both engines, one client, one operation at
// a time; hack/bench-etcd.sh runs them and prints the ratios:
//
//	go test -tags e2e -run '^$' -bench BenchmarkSimulateStore -cpu 1 ./test/e2e/
func benchEngines(b *testing.B, run func(b *testing.B, kv mvcc.WatchKV)) {
	b.Run("engine=embedded", func(b *testing.B) {
		s := mvcc.NewDefault()
		defer s.Close()
		run(b, s)
	})
	b.Run("engine=etcd", func(b *testing.B) {
		run(b, connectEtcd(b, startEtcd(b)))
	})
}

var benchKeys = func() []string {
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = fmt.Sprintf("/registry/configmaps/default/cm-%06d", i)
	}
	return keys
}()

func benchKey(i int) string { return benchKeys[i%len(benchKeys)] }

// BenchmarkSimulateStorePut: unconditional puts of 100-byte values over
// 10,000 keys.
func BenchmarkSimulateStorePut(b *testing.B) {
	benchEngines(b, func(b *testing.B, kv mvcc.WatchKV) {
		ctx := context.Background()
		val := make([]byte, 100)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := kv.Put(ctx, benchKey(i), val, mvcc.PutOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	})
}

// BenchmarkSimulateStoreGet: point reads of 10,000 keys.
func BenchmarkSimulateStoreGet(b *testing.B) {
	benchEngines(b, func(b *testing.B, kv mvcc.WatchKV) {
		ctx := context.Background()
		val := make([]byte, 100)
		for i := range 10000 {
			if _, err := kv.Put(ctx, benchKey(i), val, mvcc.PutOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r, err := kv.Range(ctx, benchKey(i), mvcc.RangeOptions{})
			if err != nil || len(r.KVs) != 1 {
				b.Fatalf("get: %v", err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	})
}

// BenchmarkSimulateStoreGuardedUpdate: Kubernetes' update, a txn guarded by
// the mod revision last read.
func BenchmarkSimulateStoreGuardedUpdate(b *testing.B) {
	benchEngines(b, func(b *testing.B, kv mvcc.WatchKV) {
		ctx := context.Background()
		val := make([]byte, 100)
		mods := make([]int64, 10000)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := i % len(mods)
			r, err := kv.Txn(ctx, mvcc.Txn{
				Compare: []mvcc.Compare{mvcc.ModRevision(benchKey(k), mvcc.Equal, mods[k])},
				Success: []mvcc.Op{mvcc.OpPutKV(benchKey(k), val, mvcc.PutOptions{})},
			})
			if err != nil || !r.Succeeded {
				b.Fatalf("txn: %v", err)
			}
			mods[k] = r.Header.Revision
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	})
}

// TestSimulateEtcdctlMatchesRealEtcd runs etcdctl scripts through
// `kubectl rv simulate etcdctl` on the embedded store and, with
// --etcd-endpoints, on a fresh real etcd, and requires the same output
// (cluster and member IDs aside), the same stderr and the same exit code.
func TestSimulateEtcdctlMatchesRealEtcd(t *testing.T) {
	t.Parallel() // see TestMain: its own etcds
	scripts := map[string]string{
		"transcript": "put a 1\nput b 1\nput c 1\nput d 1\nput k1 a\nput k2 b\nput k1 c\nget k1\ndel k1\nget k1 --rev=6\nput k1 d\nget k1\nget k --prefix --limit 1\n",
		"txn":        "put k1 v\ntxn\nmod(\"k1\") = \"2\"\nvalue(\"k1\") = \"v\"\n\nput k1 w --prev-kv\nget k1\ndel k2\n\nget k1\n\ntxn\ncreate(\"k9\") = \"0\"\n\nput k9 new\n\n\n",
		"watch":      "put /r/a 1\nwatch /r/ --prefix --rev 1 --prev-kv\nput /r/a 2\ndel /r/a\nput /r/b 1\nput /other x\ndel /r/ --prefix --prev-kv\n",
		"compaction": "put k 1\nput k 2\nput k 3\ncompact 3\nget k --rev 3\nwatch k --rev 2\nget k --rev 2\n",
		"future":     "put k 1\nget k --rev 3\n",
	}
	ids := regexp.MustCompile(`"(cluster_id|member_id)":[0-9]+`)
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			for _, format := range []string{"simple", "json"} {
				// A fresh etcd per run, for the same revisions.
				endpoint := startEtcd(t)
				connectEtcd(t, endpoint) // waits until it serves
				embedded := cluster.Run(t, strings.NewReader(script), "kubectl", "rv", "simulate", "etcdctl", "-w", format)
				onEtcd := cluster.Run(t, strings.NewReader(script), "kubectl", "rv", "simulate", "etcdctl", "-w", format, "--etcd-endpoints", endpoint)
				norm := func(r framework.Result) framework.Result {
					r.Stdout = ids.ReplaceAllString(r.Stdout, `"$1":ID`)
					return r
				}
				if d := cmp.Diff(norm(embedded), norm(onEtcd)); d != "" {
					t.Errorf("-w %s: embedded (-) and real etcd (+) differ:\n%s", format, d)
				}
				if embedded.Stdout == "" {
					t.Errorf("-w %s: no output: %s", format, embedded)
				}
			}
		})
	}
}

// TestSimulateEtcdctlExitCodes: a bad command is exit 2 with the line
// named and nothing on stdout; an etcd error is exit 1 with etcdctl's
// message; an unreachable --etcd-endpoints is exit 3.
func TestSimulateEtcdctlExitCodes(t *testing.T) {
	bad := cluster.Run(t, strings.NewReader("put k v\nget k --revision 1\n"), "kubectl", "rv", "simulate", "etcdctl")
	if bad.Code != 2 || bad.Stdout != "" || !strings.Contains(bad.Stderr, "stdin:2: get: unknown flag --revision") {
		t.Errorf("bad command: %s", bad)
	}
	compacted := cluster.Run(t, strings.NewReader("put k 1\nput k 2\ncompact 3\nget k --rev 2\n"), "kubectl", "rv", "simulate", "etcdctl")
	if compacted.Code != 1 || !strings.Contains(compacted.Stderr, "Error: etcdserver: mvcc: required revision has been compacted") {
		t.Errorf("compacted read: %s", compacted)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	_ = l.Close()
	down := cluster.RV(t, "simulate", "etcdctl", "--etcd-endpoints", closed, "get", "k")
	if down.Code != 3 || !strings.Contains(down.Stderr, "etcd is unreachable") {
		t.Errorf("unreachable etcd: %s", down)
	}
}
