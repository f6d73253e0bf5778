package predict

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// TestOfflineExecutorUnencodableLive checks that a live object JSON cannot
// encode fails as it always did, wherever the bad value is.
func TestOfflineExecutorUnencodableLive(t *testing.T) {
	for _, where := range [][]string{{"spec", "x"}, {"metadata", "managedFields"}} {
		t.Run(strings.Join(where, "."), func(t *testing.T) {
			live := liveWeb(t)
			if where[1] == "managedFields" {
				mf := live.Object["metadata"].(map[string]any)["managedFields"].([]any)
				mf[0].(map[string]any)["x"] = math.NaN()
			} else {
				live.Object["spec"].(map[string]any)["x"] = math.Inf(1)
			}
			_, want := live.MarshalJSON()
			_, err := newOffline(nil).Executor(deployGVK, "web", live)
			if want == nil || err == nil || err.Error() != want.Error() {
				t.Errorf("Executor: %v, want %v", err, want)
			}
		})
	}
}

// TestPredictLeavesLiveAlone checks that a prediction does not change the
// live object, which the offline executor shares with Predict, nor the
// desired one, which requests share parts of.
func TestPredictLeavesLiveAlone(t *testing.T) {
	live := liveWeb(t)
	liveBefore := live.DeepCopy()
	desired := desiredWeb(t, "11", "nginx:2")
	unstructured.RemoveNestedField(desired.Object, "spec", "replicas")
	desiredBefore := desired.DeepCopy()
	ex, err := newOffline(nil).Executor(deployGVK, "web", live)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Predict(context.Background(), Config{FieldManager: "ci"}, Input{Desired: desired}, ex); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(liveBefore, live); diff != "" {
		t.Errorf("live changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(desiredBefore, desired); diff != "" {
		t.Errorf("desired changed (-before +after):\n%s", diff)
	}
}

const gadgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              settings: {type: object, additionalProperties: {type: string}}
`

// TestOfflineValidatesCustomResources: an apply that takes back the only
// key of a map leaves the map null (structured-merge-diff), which a CRD's
// schema refuses (type object, not nullable): the server answers 422, and
// so does the offline engine given the CRD. An update that keeps the map
// is fine.
func TestOfflineValidatesCustomResources(t *testing.T) {
	tc, err := managedfields.ParseSchema([]byte(gadgetCRD))
	if err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}
	fm, err := managedfields.NewFieldManager(tc, gvk)
	if err != nil {
		t.Fatal(err)
	}
	obj := func(settings string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		doc := `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g","namespace":"ns"},"spec":{"size":1,"settings":` + settings + `}}`
		if err := u.UnmarshalJSON([]byte(doc)); err != nil {
			t.Fatal(err)
		}
		return u
	}
	live, err := fm.Apply(managedfields.NewEmpty(gvk), obj(`{"s0":"v0"}`), "alpha", false)
	if err != nil {
		t.Fatal(err)
	}
	live.SetResourceVersion("7")
	ex, err := newOffline(tc).Executor(gvk, "g", live)
	if err != nil {
		t.Fatal(err)
	}
	desired := obj(`{}`)
	desired.SetResourceVersion("7")
	r, err := Predict(context.Background(), Config{FieldManager: "alpha"}, Input{Desired: desired}, ex)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Methods {
		want := OK
		if m.Method == Apply || m.Method == ApplyForce {
			want = Invalid
		}
		if m.Method == StrategicMergePatch || m.Method == UpdateNoRV {
			continue
		}
		if m.Verdict != want {
			t.Errorf("%s: %s (%s), want %s", m.Method, m.Verdict, m.Reason, want)
		}
	}
}

// TestOfflineWithoutSchemaTypesCustomResources: without --schema the
// offline engine types a custom resource as the server types one whose
// schema keeps unknown fields (it failed before: the built-in schema has
// no such kind). Its metadata is ObjectMeta: a second applier's finalizer
// joins the first's without a conflict.
func TestOfflineWithoutSchemaTypesCustomResources(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Doohickey"}
	fm, err := managedfields.NewFieldManager(managedfields.DefaultTypeConverter(), gvk)
	if err != nil {
		t.Fatal(err)
	}
	obj := func(finalizer string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		doc := `{"apiVersion":"example.com/v1","kind":"Doohickey","metadata":{"name":"d","namespace":"ns","finalizers":["` + finalizer + `"]}}`
		if err := u.UnmarshalJSON([]byte(doc)); err != nil {
			t.Fatal(err)
		}
		return u
	}
	live, err := fm.Apply(managedfields.NewEmpty(gvk), obj("example.com/one"), "one", false)
	if err != nil {
		t.Fatal(err)
	}
	live.SetResourceVersion("3")
	ex, err := newOffline(nil).Executor(gvk, "d", live)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Predict(context.Background(), Config{FieldManager: "two", Methods: []Method{Apply}}, Input{Desired: obj("example.com/two")}, ex)
	if err != nil {
		t.Fatal(err)
	}
	if m := r.Methods[0]; m.Verdict != OK {
		t.Errorf("apply of a second finalizer: %s %v (%s), want ok", m.Verdict, m.Conflicts, m.Reason)
	}
}

// TestOfflineUnknownVerdict: where the offline engine does not run the
// API server's rules for a kind, a write it sees succeed is unknown, with
// the reason; what the Kubernetes API server decides before those rules
// (a stale resourceVersion's 409, here of the update and of the apply
// that carries it) stays known, except on an aggregated API, whose
// server is another. Kinds with rules, and custom resources, are judged.
func TestOfflineUnknownVerdict(t *testing.T) {
	tests := []struct {
		name, apiVersion, kind, why string
		want                        map[Method]Verdict
	}{
		{"a built-in kind without rules", "v1", "Namespace", "does not run the API server's defaulting and validation of Namespace v1",
			map[Method]Verdict{Update: Conflict, UpdateNoRV: Unknown, MergePatch: Unknown, ApplyForce: Conflict}},
		{"a kind this build does not know", "apps/v1", "Frobnicator", "Frobnicator apps/v1 is unknown to this build, whose types and rules are Kubernetes 1.36's",
			map[Method]Verdict{Update: Conflict, UpdateNoRV: Unknown, MergePatch: Unknown, ApplyForce: Conflict}},
		{"an aggregated API", "metrics.k8s.io/v1beta1", "PodMetrics", "PodMetrics metrics.k8s.io/v1beta1 is served by an aggregated API server",
			map[Method]Verdict{Update: Unknown, UpdateNoRV: Unknown, MergePatch: Unknown, ApplyForce: Unknown}},
		{"a kind with rules", "v1", "ConfigMap", "",
			map[Method]Verdict{Update: Conflict, UpdateNoRV: OK, MergePatch: OK, ApplyForce: Conflict}},
		{"a custom resource", "example.com/v1", "Widget", "",
			map[Method]Verdict{Update: Conflict, UpdateNoRV: Invalid, MergePatch: OK, ApplyForce: Conflict}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gvk := schema.FromAPIVersionAndKind(tt.apiVersion, tt.kind)
			live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": tt.apiVersion, "kind": tt.kind,
				"metadata": map[string]any{"name": "x", "namespace": "ns", "resourceVersion": "7", "uid": "u-1", "labels": map[string]any{"a": "1"}}}}
			desired := &unstructured.Unstructured{Object: map[string]any{"apiVersion": tt.apiVersion, "kind": tt.kind,
				"metadata": map[string]any{"name": "x", "namespace": "ns", "resourceVersion": "3", "labels": map[string]any{"a": "2"}}}}
			ex, err := newOffline(nil).Executor(gvk, "x", live)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{FieldManager: "ci", Methods: []Method{Update, UpdateNoRV, MergePatch, ApplyForce}}
			res, err := Predict(context.Background(), cfg, Input{Desired: desired}, ex)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, verdicts(res)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			for _, m := range res.Methods {
				if m.Verdict == Unknown && !strings.Contains(m.Reason, tt.why) {
					t.Errorf("%s: reason %q, want it to say %q", m.Method, m.Reason, tt.why)
				}
			}
		})
	}
}

func TestWorstRanksUnknownAboveOK(t *testing.T) {
	for _, tc := range []struct {
		verdicts []Verdict
		want     Verdict
	}{
		{[]Verdict{OK, Unknown}, Unknown},
		{[]Verdict{Unknown, NotFound}, NotFound},
		{[]Verdict{Unknown, Clobber, OK}, Clobber},
		{[]Verdict{Conflict, Unknown}, Conflict},
	} {
		var r Result
		for _, v := range tc.verdicts {
			r.Methods = append(r.Methods, MethodResult{Verdict: v})
		}
		if got := r.Worst(); got != tc.want {
			t.Errorf("Worst(%v) = %s, want %s", tc.verdicts, got, tc.want)
		}
	}
}
