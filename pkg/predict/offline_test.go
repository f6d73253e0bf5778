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
	crdrules "github.com/kubectl-rv/kubectl-rv/pkg/serverrules/crd"
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
	off := NewOffline(tc)
	if off.Rules, err = crdrules.WithSchema([]byte(gadgetCRD)); err != nil {
		t.Fatal(err)
	}
	ex, err := off.Executor(gvk, "g", live)
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

// TestOfflineWithoutSchemaCannotKnowCustomResources: without the CRD of a
// custom resource the offline engine does not know its pruning, defaults,
// validation or list types: a write that passes the write path's own
// checks is unknown, with the reason. What those checks decide stands: a
// stale resourceVersion is a 409 (not for an apply, which may conflict
// with other owners first), a strategic merge patch a 415, an update
// without resourceVersion or a JSON patch whose test fails a 422.
func TestOfflineWithoutSchemaCannotKnowCustomResources(t *testing.T) {
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
	desired := obj("example.com/two")
	desired.SetResourceVersion("2")
	r, err := Predict(context.Background(), Config{FieldManager: "two"}, Input{Desired: desired}, ex)
	if err != nil {
		t.Fatal(err)
	}
	want := map[Method]Verdict{Update: Conflict, UpdateNoRV: Invalid, JSONPatch: Invalid, MergePatch: Unknown, MergePatchRV: Conflict,
		StrategicMergePatch: Invalid, Apply: Unknown, ApplyForce: Unknown}
	for _, m := range r.Methods {
		if m.Verdict != want[m.Method] {
			t.Errorf("%s: %s (%s), want %s", m.Method, m.Verdict, m.Reason, want[m.Method])
		}
		if m.Verdict == Unknown && !strings.Contains(m.Reason, "give the CRD of Doohickey.example.com with --schema") {
			t.Errorf("%s: reason %q", m.Method, m.Reason)
		}
	}
}

// TestOfflineConversionWebhookCannotKnow: a version that is stored
// through a conversion webhook is converted by code that runs only on the
// cluster: a write that reaches validation is unknown, with the reason;
// a stale resourceVersion is still a 409.
func TestOfflineConversionWebhookCannotKnow(t *testing.T) {
	crd := strings.Replace(gadgetCRD, "  versions:\n", `  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: "https://conv.example.com"}
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, 1)
	tc, err := managedfields.ParseSchema([]byte(crd))
	if err != nil {
		t.Fatal(err)
	}
	off := NewOffline(tc)
	if off.Rules, err = crdrules.WithSchema([]byte(crd)); err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1beta1", Kind: "Gadget"}
	live := &unstructured.Unstructured{}
	if err := live.UnmarshalJSON([]byte(`{"apiVersion":"example.com/v1beta1","kind":"Gadget","metadata":{"name":"g","namespace":"ns","resourceVersion":"7","generation":1},"spec":{"size":1}}`)); err != nil {
		t.Fatal(err)
	}
	ex, err := off.Executor(gvk, "g", live)
	if err != nil {
		t.Fatal(err)
	}
	for rv, want := range map[string]Verdict{"7": Unknown, "6": Conflict} {
		desired := live.DeepCopy()
		desired.SetResourceVersion(rv)
		_ = unstructured.SetNestedField(desired.Object, int64(2), "spec", "size")
		r, err := Predict(context.Background(), Config{FieldManager: "ci", Methods: []Method{Update}}, Input{Desired: desired}, ex)
		if err != nil {
			t.Fatal(err)
		}
		m := r.Methods[0]
		if m.Verdict != want || (want == Unknown && !strings.Contains(m.Reason, "example.com/v1beta1 is stored as example.com/v1 through a conversion webhook")) {
			t.Errorf("resourceVersion %s: %s (%s), want %s", rv, m.Verdict, m.Reason, want)
		}
	}
}

// TestOfflineUnknownVerdict: where the offline engine does not run the
// API server's rules for a kind, a write it sees succeed is unknown, with
// the reason; what the Kubernetes API server decides before those rules
// (a stale resourceVersion's 409, here of the update and of the apply
// that carries it) stays known, except on an aggregated API, whose
// server is another. Kinds with rules are judged; a custom resource
// without its CRD is unknown as the write path's CannotKnowError says.
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
		{"a custom resource without its CRD", "example.com/v1", "Widget", "give the CRD of Widget.example.com with --schema",
			map[Method]Verdict{Update: Conflict, UpdateNoRV: Invalid, MergePatch: Unknown, ApplyForce: Unknown}},
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
