package inspect_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-rv/kubectl-rv/pkg/inspect"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/watchprint"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// watchPayloads returns n watch event objects (JSON, as the API server
// sends them) spread over objects Deployments, based on a real Deployment
// with four managedFields entries: even events are spec writes by an
// applier, odd ones status writes by kube-controller-manager, each moving
// its entry's time, as on a live cluster.
func watchPayloads(b *testing.B, n, objects int) [][]byte {
	b.Helper()
	raw, err := os.ReadFile("testdata/deployment.json")
	if err != nil {
		b.Fatal(err)
	}
	base := map[string]any{}
	if err := json.Unmarshal(raw, &base); err != nil {
		b.Fatal(err)
	}
	t0 := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	out := make([][]byte, n)
	// The times of the applier's and kube-controller-manager's entries, per
	// object, carried from version to version as the API server does.
	type stamps struct{ apply, status string }
	last := make([]stamps, objects)
	for i := range n {
		u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(base)}
		obj := i % objects
		round := i / objects
		u.SetName(fmt.Sprintf("web-%d", obj))
		u.SetResourceVersion(fmt.Sprint(1000 + i))
		mf := u.Object["metadata"].(map[string]any)["managedFields"].([]any)
		stamp := t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339)
		if round%2 == 0 {
			last[obj].apply = stamp
		} else {
			last[obj].status = stamp
		}
		_ = unstructured.SetNestedField(u.Object, int64(2+(round/2)%5), "spec", "replicas")
		u.SetGeneration(int64(10 + round/2))
		_ = unstructured.SetNestedField(u.Object, int64(((round+1)/2)%7), "status", "readyReplicas")
		if last[obj].apply != "" {
			mf[0].(map[string]any)["time"] = last[obj].apply
		}
		if last[obj].status != "" {
			mf[3].(map[string]any)["time"] = last[obj].status
		}
		data, err := u.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		out[i] = data
	}
	return out
}

func benchmarkPipeline(b *testing.B, format output.Format) {
	const objects = 100
	payloads := watchPayloads(b, 2000, objects)
	pr := watchprint.New(&output.Printer{Format: format, Out: io.Discard}, watchprint.Options{})
	tr := inspect.NewTracker(inspect.NewTrackerConfig())
	t0 := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	b.SetBytes(int64(len(payloads[0])))
	b.ReportAllocs()
	var m goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&m)
	heap0 := m.HeapAlloc
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		// Decode as client-go's dynamic client does.
		obj, _, err := unstructured.UnstructuredJSONScheme.Decode(payloads[i%len(payloads)], nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		u := obj.(*unstructured.Unstructured)
		// Replays of the payload ring must look new to the tracker.
		u.SetResourceVersion(fmt.Sprint(1000 + i))
		ev := follow.Event{Type: follow.Modified, Time: t0.Add(time.Duration(i) * time.Millisecond), Resource: "apps/v1/deployments", Object: u}
		for _, e := range tr.Observe(ev) {
			if err := pr.Event(e); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	// On a shared machine the wall clock counts time spent waiting for a
	// core; the process's CPU time does not. Run with -cpu 1 so that this is
	// the rate of one core.
	b.ReportMetric(float64(b.N)/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
	// What the tracker keeps: the same whatever b.N, since it grows with
	// the watched objects and not with the events.
	goruntime.GC()
	goruntime.ReadMemStats(&m)
	b.ReportMetric(float64(int64(m.HeapAlloc)-int64(heap0))/objects, "retained-B/object")
	goruntime.KeepAlive(tr)
	goruntime.KeepAlive(payloads)
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPipeline measures decode, attribute, diff and render (table) of
// one watch event of a real-sized Deployment.
func BenchmarkPipeline(b *testing.B) { benchmarkPipeline(b, output.Table) }

// BenchmarkPipelineJSON is BenchmarkPipeline with -o json rendering.
func BenchmarkPipelineJSON(b *testing.B) { benchmarkPipeline(b, output.JSON) }

// BenchmarkDecodeOnly is the JSON decode of BenchmarkPipeline alone: the
// part client-go does in any watch, the ceiling of the pipeline.
func BenchmarkDecodeOnly(b *testing.B) {
	payloads := watchPayloads(b, 2000, 100)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, _, err := unstructured.UnstructuredJSONScheme.Decode(payloads[i%len(payloads)], nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
}
