package inspect_test

import (
	"encoding/json"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-rv/kubectl-rv/pkg/inspect"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// smallConfigMap is a ConfigMap as `kubectl apply` (client-side) leaves it,
// about 1.5 KB of JSON: three data keys, two labels, the
// last-applied-configuration annotation that repeats them, and one
// managedFields entry.
func smallConfigMap(i int) map[string]any {
	name := fmt.Sprintf("settings-%06d", i)
	data := map[string]any{
		"app.properties": "server.port=8080\nserver.shutdown=graceful\nlogging.level.root=INFO\nlogging.level.web=DEBUG\nspring.datasource.url=jdbc:postgresql://db:5432/shop\n",
		"feature-flags":  "checkout-v2=true\nrecommendations=false\nsearch-suggest=true\n",
		"log-level":      "info",
	}
	last, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": data,
		"metadata": map[string]any{"name": name, "namespace": "shop", "labels": map[string]any{"app": "web", "tier": "backend"}, "annotations": map[string]any{}}})
	fields := `{"f:data":{".":{},"f:app.properties":{},"f:feature-flags":{},"f:log-level":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app":{},"f:tier":{}}}}`
	var f map[string]any
	_ = utiljson.Unmarshal([]byte(fields), &f)
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "data": data,
		"metadata": map[string]any{
			"name": name, "namespace": "shop", "uid": fmt.Sprintf("6f1c2a3e-0b4d-4e5f-9a6b-%012d", i),
			"resourceVersion": fmt.Sprint(1000 + i), "creationTimestamp": "2026-11-21T15:00:00Z",
			"labels":      map[string]any{"app": "web", "tier": "backend"},
			"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": string(last) + "\n"},
			"managedFields": []any{map[string]any{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
				"time": "2026-11-21T15:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": f}},
		},
	}
}

// deployment returns the real Deployment of testdata/deployment.json (four
// managedFields entries) renamed.
func deployment(b *testing.B, raw []byte, i int) map[string]any {
	m := map[string]any{}
	if err := utiljson.Unmarshal(raw, &m); err != nil {
		b.Fatal(err)
	}
	md := m["metadata"].(map[string]any)
	md["name"] = fmt.Sprintf("web-%06d", i)
	md["uid"] = fmt.Sprintf("6f1c2a3e-0b4d-4e5f-9a6b-%012d", i)
	md["resourceVersion"] = fmt.Sprint(1000 + i)
	return m
}

func heapInUse() uint64 {
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkTrackerRetained reports the bytes the watch Tracker retains per
// watched object (retained-B/object) beside the size of the object's own
// compact JSON (json-B/object), the figures docs/bench/watch.md quotes: after the
// initial list of n objects (listed), and after one more write of each
// object that changes one value and moves its writer's managedFields time
// (written; this adds the per-object counts of the summary and the
// history of the changed field).
func BenchmarkTrackerRetained(b *testing.B) {
	raw, err := os.ReadFile("testdata/deployment.json")
	if err != nil {
		b.Fatal(err)
	}
	kinds := []struct {
		name     string
		resource string
		n        int
		make     func(i int) map[string]any
		change   func(m map[string]any)
	}{
		{"configmap", "v1/configmaps", 20000, smallConfigMap, func(m map[string]any) {
			m["data"].(map[string]any)["log-level"] = "debug"
		}},
		{"deployment", "apps/v1/deployments", 5000, func(i int) map[string]any { return deployment(b, raw, i) }, func(m map[string]any) {
			_ = unstructured.SetNestedField(m, int64(7), "spec", "replicas")
		}},
	}
	for _, k := range kinds {
		for _, written := range []bool{false, true} {
			name := k.name + "/listed"
			if written {
				name = k.name + "/written"
			}
			b.Run(name, func(b *testing.B) {
				for range b.N {
					retained, jsonSize := retainedPerObject(b, k.resource, k.n, k.make, k.change, written)
					b.ReportMetric(retained, "retained-B/object")
					b.ReportMetric(jsonSize, "json-B/object")
				}
			})
		}
	}
}

// TestTrackerRetainsLessThanJSON holds the watch Tracker to the goal of
// issue 17: what it keeps of a watched ConfigMap, listed or written (with
// the history a write adds: the summary's counts, the hot rate and the
// changed field's fight history), is no larger than the object's own JSON.
func TestTrackerRetainsLessThanJSON(t *testing.T) {
	change := func(m map[string]any) { m["data"].(map[string]any)["log-level"] = "debug" }
	for _, written := range []bool{false, true} {
		retained, jsonSize := retainedPerObject(t, "v1/configmaps", 20000, smallConfigMap, change, written)
		if retained > jsonSize {
			t.Errorf("written=%v: the tracker retains %.0f bytes per ConfigMap, more than its %.0f bytes of JSON", written, retained, jsonSize)
		}
	}
}

// retainedPerObject lists n objects made by mk into a new Tracker (and, when
// written, modifies each once with change) and returns the heap it retains
// per object and the mean compact JSON size of the objects.
func retainedPerObject(b testing.TB, resource string, n int, mk func(int) map[string]any, change func(map[string]any), written bool) (retained, jsonSize float64) {
	t0 := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	var total int
	for i := range 100 {
		data, err := json.Marshal(mk(i))
		if err != nil {
			b.Fatal(err)
		}
		total += len(data)
	}
	before := heapInUse()
	tr := inspect.NewTracker(inspect.NewTrackerConfig())
	for i := range n {
		tr.Observe(follow.Event{Type: follow.List, Time: t0, Resource: resource, Object: &unstructured.Unstructured{Object: mk(i)}})
	}
	tr.Observe(follow.Event{Type: follow.Synced, Reason: follow.SyncInitial, Time: t0, Resource: resource, ResourceVersion: "999999"})
	if written {
		at := t0.Add(time.Minute)
		for i := range n {
			m := mk(i)
			change(m)
			md := m["metadata"].(map[string]any)
			md["resourceVersion"] = fmt.Sprint(2000000 + i)
			mf := md["managedFields"].([]any)
			mf[0].(map[string]any)["time"] = at.Format(time.RFC3339)
			if rows := tr.Observe(follow.Event{Type: follow.Modified, Time: at, Resource: resource, Object: &unstructured.Unstructured{Object: m}}); len(rows) == 0 || len(rows[0].Fields) == 0 || strings.HasPrefix(rows[0].Writer.String(), "?") {
				b.Fatalf("write of object %d: want a change with a known writer, got %+v", i, rows)
			}
		}
	}
	after := heapInUse()
	goruntime.KeepAlive(tr)
	return float64(after-before) / float64(n), float64(total) / 100
}
