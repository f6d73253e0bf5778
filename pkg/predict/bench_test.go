package predict

import (
	"context"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	crdrules "github.com/kubectl-rv/kubectl-rv/pkg/serverrules/crd"
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

// benchCRD is a custom resource with defaults, an associative list and
// two CEL rules (one a transition rule).
const benchCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: tools.example.com}
spec:
  group: example.com
  names: {kind: Tool, plural: tools}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - {rule: "self.size <= self.max", message: size must not exceed max}
            - {rule: "!has(oldSelf.mode) || self.mode == oldSelf.mode", message: mode is immutable}
            properties:
              size: {type: integer, default: 1, minimum: 0}
              max: {type: integer, default: 5}
              mode: {type: string, enum: [fast, slow]}
              items:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    weight: {type: integer, default: 10}
          status: {type: object, properties: {phase: {type: string}}}
`

// BenchmarkOfflineCustomResourceAllMethods predicts every method for one
// custom resource offline, given its CRD (pruning, defaults, validation
// and CEL rules on apiextensions-apiserver's code); the CRD is parsed
// once, as predict --offline does for all objects.
func BenchmarkOfflineCustomResourceAllMethods(b *testing.B) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Tool"}
	tc, err := managedfields.ParseSchema([]byte(benchCRD))
	if err != nil {
		b.Fatal(err)
	}
	eng := NewOffline(tc)
	if eng.Rules, err = crdrules.WithSchema([]byte(benchCRD)); err != nil {
		b.Fatal(err)
	}
	obj := func(doc string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(doc)); err != nil {
			b.Fatal(err)
		}
		return u
	}
	fm, err := managedfields.NewFieldManager(tc, gvk)
	if err != nil {
		b.Fatal(err)
	}
	live, err := fm.Apply(managedfields.NewEmpty(gvk), obj(`{"apiVersion":"example.com/v1","kind":"Tool","metadata":{"name":"t","namespace":"ns"},"spec":{"size":2,"max":5,"mode":"fast","items":[{"name":"a","weight":10}]}}`), "alpha", false)
	if err != nil {
		b.Fatal(err)
	}
	live.SetResourceVersion("7")
	live.SetGeneration(1)
	ctx := context.Background()
	cfg := Config{FieldManager: "ci", TypeConverter: tc}
	for _, bc := range []struct{ name, desired string }{
		// Every field given: what an offline prediction could take before
		// the CRD's rules ran (an unknown field failed it).
		{"complete", `{"apiVersion":"example.com/v1","kind":"Tool","metadata":{"name":"t","namespace":"ns","resourceVersion":"7"},"spec":{"size":3,"max":5,"mode":"fast","items":[{"name":"a","weight":10},{"name":"b","weight":10}]}}`},
		// An unknown field to prune and defaults to fill.
		{"pruned-defaulted", `{"apiVersion":"example.com/v1","kind":"Tool","metadata":{"name":"t","namespace":"ns","resourceVersion":"7"},"spec":{"size":3,"mode":"fast","items":[{"name":"a"},{"name":"b"}],"color":"red"}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			desired := obj(bc.desired)
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				ex, err := eng.Executor(gvk, "t", live)
				if err != nil {
					b.Fatal(err)
				}
				res, err := Predict(ctx, cfg, Input{Desired: desired}, ex)
				if err != nil || len(res.Methods) != len(AllMethods) {
					b.Fatalf("predict: %v (%d methods)", err, len(res.Methods))
				}
				if v := res.Methods[0].Verdict; v != OK && v != Clobber {
					b.Fatalf("update: %s (%s)", v, res.Methods[0].Reason)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
