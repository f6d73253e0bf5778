package predict

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time. The benchmarks report it
// per operation (cpu-ns/op) next to wall time, because on a shared machine
// wall time mostly measures the other processes.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkOfflineDeploymentAllMethods predicts every method for one
// Deployment offline (target: under 5 ms per prediction).
func BenchmarkOfflineDeploymentAllMethods(b *testing.B) {
	live := liveWeb(b)
	desired := desiredWeb(b, "11", "nginx:2")
	eng := newOffline(nil)
	ctx := context.Background()
	cfg := Config{FieldManager: "ci"}
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		ex, err := eng.Executor(deployGVK, "web", live)
		if err != nil {
			b.Fatal(err)
		}
		res, err := Predict(ctx, cfg, Input{Desired: desired}, ex)
		if err != nil || len(res.Methods) != len(AllMethods) {
			b.Fatalf("predict: %v (%d methods)", err, len(res.Methods))
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}
