package mvcc

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// throughput reports ops per wall-clock second and per CPU second.
type throughput struct {
	b    *testing.B
	cpu0 time.Duration
	unit string
}

func startThroughput(b *testing.B, unit string) *throughput {
	b.ReportAllocs()
	b.ResetTimer()
	return &throughput{b: b, cpu0: cpuNow(), unit: unit}
}

func (t *throughput) stop() {
	t.b.StopTimer()
	cpu := cpuNow() - t.cpu0
	t.b.ReportMetric(float64(t.b.N)/t.b.Elapsed().Seconds(), t.unit+"/s")
	if cpu > 0 {
		t.b.ReportMetric(float64(t.b.N)/cpu.Seconds(), t.unit+"/cpu-s")
	}
}

// The store's throughput, one core: go test -run '^$' -bench . -cpu 1 ./pkg/mvcc/
// The same operation streams run on a real etcd in test/e2e (hack/bench-etcd.sh).

// benchKeys is the key pool of the benchmarks: Kubernetes-like registry
// keys, so the map and tree see realistic key lengths.
func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("/registry/configmaps/default/cm-%06d", i)
	}
	return keys
}

// BenchmarkPut writes 100-byte values over 10,000 keys (each key gets a
// long history, as an API server's objects do).
func BenchmarkPut(b *testing.B) {
	ctx := context.Background()
	s := NewDefault()
	keys := benchKeys(10000)
	val := make([]byte, 100)
	t := startThroughput(b, "puts")
	for i := 0; i < b.N; i++ {
		if _, err := s.Put(ctx, keys[i%len(keys)], val, PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	t.stop()
}

// BenchmarkGuardedPut is Kubernetes' update: a txn that puts only if the
// key's mod revision is the one read.
func BenchmarkGuardedPut(b *testing.B) {
	ctx := context.Background()
	s := NewDefault()
	keys := benchKeys(10000)
	val := make([]byte, 100)
	mods := make([]int64, len(keys))
	t := startThroughput(b, "txns")
	for i := 0; i < b.N; i++ {
		k := i % len(keys)
		r, err := s.Txn(ctx, Txn{Compare: []Compare{ModRevision(keys[k], Equal, mods[k])}, Success: []Op{OpPutKV(keys[k], val, PutOptions{})}})
		if err != nil || !r.Succeeded {
			b.Fatalf("txn: %v %+v", err, r)
		}
		mods[k] = r.Header.Revision
	}
	t.stop()
}

// BenchmarkGet reads single keys at the current revision from a store of
// 10,000 keys with 10 versions each.
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	s := NewDefault()
	keys := benchKeys(10000)
	val := make([]byte, 100)
	for range 10 {
		for _, k := range keys {
			_, _ = s.Put(ctx, k, val, PutOptions{})
		}
	}
	t := startThroughput(b, "gets")
	for i := 0; i < b.N; i++ {
		r, err := s.Range(ctx, keys[i%len(keys)], RangeOptions{})
		if err != nil || len(r.KVs) != 1 {
			b.Fatalf("get: %v", err)
		}
	}
	t.stop()
}

// BenchmarkGetHistorical reads single keys at a past revision.
func BenchmarkGetHistorical(b *testing.B) {
	ctx := context.Background()
	s := NewDefault()
	keys := benchKeys(10000)
	val := make([]byte, 100)
	for range 10 {
		for _, k := range keys {
			_, _ = s.Put(ctx, k, val, PutOptions{})
		}
	}
	rev := int64(1 + 5*len(keys))
	t := startThroughput(b, "gets")
	for i := 0; i < b.N; i++ {
		if _, err := s.Range(ctx, keys[i%len(keys)], RangeOptions{Rev: rev}); err != nil {
			b.Fatal(err)
		}
	}
	t.stop()
}

// BenchmarkPutWatched puts with 10 watchers on disjoint prefixes and one on
// everything, draining every 1,000 writes.
func BenchmarkPutWatched(b *testing.B) {
	ctx := context.Background()
	s := NewDefault()
	keys := benchKeys(10000)
	val := make([]byte, 100)
	var ws []Watcher
	for i := range 10 {
		p := fmt.Sprintf("/registry/configmaps/default/cm-00%d", i)
		w, _ := s.Watch(ctx, p, WatchOptions{End: PrefixEnd(p)})
		ws = append(ws, w)
	}
	all, _ := s.Watch(ctx, "/registry/", WatchOptions{End: PrefixEnd("/registry/")})
	ws = append(ws, all)
	t := startThroughput(b, "puts")
	for i := 0; i < b.N; i++ {
		_, _ = s.Put(ctx, keys[i%len(keys)], val, PutOptions{})
		if i%1000 == 999 {
			for _, w := range ws {
				w.Drain()
			}
		}
	}
	t.stop()
}
