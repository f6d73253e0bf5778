package simulate

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

const millionWrites = `apiVersion: rv.kubectl-rv.dev/v1alpha1
kind: Scenario
name: million-writes
seed: 1
duration: 24h
latency: {min: 1ms, max: 1ms}
compactionInterval: 5m
managedFields: false
trace: false
objects:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: counter, namespace: default}
  data: {count: "0"}
actors:
- name: writer
  target: {apiVersion: v1, kind: ConfigMap, namespace: default, name: counter}
  method: update
  change: {increment: data.count}
  thinkTime: 1ms
  writes: WRITES
`

// benchWrites is 1,000,000 unless SIM_BENCH_WRITES says otherwise (for
// profiling a shorter run).
var benchWrites = func() int {
	if n, err := strconv.Atoi(os.Getenv("SIM_BENCH_WRITES")); err == nil && n > 0 {
		return n
	}
	return 1000000
}()

// BenchmarkMillionWrites runs a scenario of 1,000,000 successful
// read-modify-write updates (2,000,000 requests through the API server
// layer and the embedded store) per iteration.
func BenchmarkMillionWrites(b *testing.B) {
	sc, err := scenario.Parse([]byte(strings.Replace(millionWrites, "WRITES", strconv.Itoa(benchWrites), 1)), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		res, err := Run(context.Background(), sc, Config{})
		if err != nil {
			b.Fatal(err)
		}
		if got := res.Actors[0].Successes; got != benchWrites {
			b.Fatalf("want %d writes, got %d", benchWrites, got)
		}
	}
	// CPU time is the figure to compare on a shared machine: wall time
	// includes waiting for a core.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime returns the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
