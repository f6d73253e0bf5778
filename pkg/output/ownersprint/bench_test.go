package ownersprint

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/owners"
)

// bigObject returns an object with items*5 owned leaves in a keyed list,
// spread over managers managers: each item is owned by one manager, and its
// "shared" field also by the next manager (so that the tree does not
// collapse, and hazards have work to do).
func bigObject(tb testing.TB, items, managers int) *unstructured.Unstructured {
	tb.Helper()
	list := make([]any, items)
	perManager := make([]map[string]any, managers)
	for m := range perManager {
		perManager[m] = map[string]any{}
	}
	for i := range items {
		name := fmt.Sprintf("item-%05d", i)
		list[i] = map[string]any{"name": name, "image": "registry.example.com/app:" + name, "port": int64(8000 + i%1000), "shared": "v", "note": "x: y #z"}
		key := fmt.Sprintf(`k:{"name":%q}`, name)
		m := i % managers
		perManager[m][key] = map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:image": map[string]any{}, "f:port": map[string]any{}, "f:shared": map[string]any{}, "f:note": map[string]any{}}
		next := perManager[(m+1)%managers]
		next[key] = map[string]any{"f:shared": map[string]any{}}
	}
	var mfs []any
	for m := range managers {
		op := "Update"
		if m%3 == 0 {
			op = "Apply"
		}
		mfs = append(mfs, map[string]any{
			"manager": fmt.Sprintf("manager-%02d", m), "operation": op, "apiVersion": "example.com/v1",
			"time": "2026-11-21T15:00:00Z", "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:spec": map[string]any{"f:items": perManager[m]}},
		})
	}
	obj := map[string]any{"apiVersion": "example.com/v1", "kind": "Big",
		"metadata": map[string]any{"name": "big", "namespace": "default", "managedFields": mfs},
		"spec":     map[string]any{"items": list}}
	// Round-trip through JSON, as objects from the API server are.
	js, err := json.Marshal(obj)
	if err != nil {
		tb.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		tb.Fatal(err)
	}
	return u
}

func benchView(b *testing.B, view string) {
	u := bigObject(b, 1000, 12)
	in := []objects.Object{{Object: u, Source: objects.Source{Item: -1}}}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	defer func() {
		// Wall time is unreliable on a shared machine; CPU time per
		// operation is what the object costs.
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}()
	for b.Loop() {
		r, err := owners.Analyze(in, owners.Config{})
		if err != nil {
			b.Fatal(err)
		}
		objs := r.Objects
		p := &output.Printer{Format: output.Table, Out: io.Discard}
		switch view {
		case "tree":
			err = Tree(io.Discard, objs, Options{Now: now})
		case "blame":
			err = Blame(io.Discard, objs, Options{Now: now})
		case "table":
			err = Table(p, objs, Options{Now: now})
		case "summary":
			err = Summary(p, objs, Options{Now: now})
		case "json":
			p.Format = output.JSON
			err = p.PrintObject(NewReport(objs, nil))
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// The decode-and-render benchmarks: an object with 5,000 owned leaves (plus
// 1,000 owned list items) and 12 managers, decoded from its managedFields,
// attached, analyzed for hazards and rendered. Target: under 20 ms.
func BenchmarkDecodeRenderTree(b *testing.B)    { benchView(b, "tree") }
func BenchmarkDecodeRenderBlame(b *testing.B)   { benchView(b, "blame") }
func BenchmarkDecodeRenderTable(b *testing.B)   { benchView(b, "table") }
func BenchmarkDecodeRenderSummary(b *testing.B) { benchView(b, "summary") }
func BenchmarkDecodeRenderJSON(b *testing.B)    { benchView(b, "json") }

func TestBigObjectShape(t *testing.T) {
	u := bigObject(t, 1000, 12)
	objs := analyze(t, u)
	leaves := 0
	for _, n := range objs[0].Ownership.Fields() {
		if len(n.Children) == 0 {
			leaves++
		}
	}
	if leaves != 5000 || len(objs[0].Entries) != 12 {
		t.Fatalf("the benchmark object has %d owned leaves and %d managers, want 5000 and 12", leaves, len(objs[0].Entries))
	}
	var buf strings.Builder
	if err := Blame(&buf, objs, Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, u.Object, []byte(buf.String()))
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkManyDeployments is the client side of owners -A over 1,000
// Deployments (each as the real one in testdata, six managers): decode,
// attach, analyze and render the summary and the tree.
func BenchmarkManyDeployments(b *testing.B) {
	base := load(b, managedfields.Filter{}, "deployment.yaml")[0].Object
	var objs []objects.Object
	for i := range 1000 {
		u := base.DeepCopy()
		u.SetName(fmt.Sprintf("app-%d", i))
		objs = append(objs, objects.Object{Object: u, Source: objects.Source{Item: -1}})
	}
	for _, view := range []string{"summary", "tree"} {
		b.Run(view, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			defer func() {
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			}()
			for b.Loop() {
				r, err := owners.Analyze(objs, owners.Config{})
				if err != nil {
					b.Fatal(err)
				}
				rs := r.Objects
				p := &output.Printer{Format: output.Table, Out: io.Discard}
				if view == "summary" {
					err = Summary(p, rs, Options{Now: now})
				} else {
					err = Tree(io.Discard, rs, Options{Now: now})
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
