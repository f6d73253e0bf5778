package predict

import (
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules"

	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-rv/kubectl-rv/internal/testobj"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

var deployGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

// obj decodes a one-object YAML fixture.
var obj = testobj.FromYAML

const webYAML = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1"}
      - {name: sidecar, image: "busybox:1"}
`

// liveWeb builds a live Deployment created by kubectl-create at RV 10 whose
// replicas were then taken by an hpa-like updater (RV 11).
func liveWeb(t testing.TB) *unstructured.Unstructured {
	t.Helper()
	fm, err := managedfields.NewFieldManager(managedfields.BuiltinTypeConverter(), deployGVK)
	if err != nil {
		t.Fatal(err)
	}
	// The server defaults a created object before the field manager sees it.
	web := obj(t, webYAML)
	serverrules.BuiltinDefaults(deployGVK, web)
	created, err := fm.Update(managedfields.NewEmpty(deployGVK), web, "kubectl-create", "")
	if err != nil {
		t.Fatal(err)
	}
	created.SetUID("uid-1")
	created.SetResourceVersion("10")
	created.SetGeneration(1)
	next := created.DeepCopy()
	next.SetManagedFields(nil)
	_ = unstructured.SetNestedField(next.Object, int64(4), "spec", "replicas")
	live, err := fm.Update(created, next, "hpa", "")
	if err != nil {
		t.Fatal(err)
	}
	live.SetResourceVersion("11")
	live.SetGeneration(2)
	return live
}

func desiredWeb(t testing.TB, rv string, image string) *unstructured.Unstructured {
	d := obj(t, webYAML)
	d.SetResourceVersion(rv)
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = image
	_ = unstructured.SetNestedSlice(d.Object, cs, "spec", "template", "spec", "containers")
	return d
}

func predictOffline(t testing.TB, cfg Config, in Input, live *unstructured.Unstructured) Result {
	t.Helper()
	ex, err := newOffline(nil).Executor(deployGVK, "web", live)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Predict(context.Background(), cfg, in, ex)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func verdicts(r Result) map[Method]Verdict {
	m := map[Method]Verdict{}
	for _, mr := range r.Methods {
		m[mr.Method] = mr.Verdict
	}
	return m
}

func TestPredictOfflineVerdicts(t *testing.T) {
	tests := []struct {
		name  string
		rv    string
		image string
		want  map[Method]Verdict
	}{
		{
			name: "stale manifest resets replicas the hpa owns", rv: "10", image: "nginx:2",
			want: map[Method]Verdict{
				Update: Conflict, UpdateNoRV: Clobber, JSONPatch: Invalid, MergePatch: Clobber,
				MergePatchRV: Conflict, StrategicMergePatch: Clobber, Apply: ApplyConflict, ApplyForce: Conflict,
			},
		},
		{
			name: "fresh manifest resets replicas the hpa owns", rv: "11", image: "nginx:2",
			want: map[Method]Verdict{
				Update: Clobber, UpdateNoRV: Clobber, JSONPatch: Clobber, MergePatch: Clobber,
				MergePatchRV: Clobber, StrategicMergePatch: Clobber, Apply: ApplyConflict, ApplyForce: Clobber,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := predictOffline(t, Config{FieldManager: "ci"}, Input{Desired: desiredWeb(t, tt.rv, tt.image)}, liveWeb(t))
			if diff := cmp.Diff(tt.want, verdicts(res)); diff != "" {
				b, _ := json.MarshalIndent(res, "", "  ")
				t.Errorf("verdicts (-want +got):\n%s\n%s", diff, b)
			}
		})
	}
}

func TestPredictOfflineApplyConflictOwners(t *testing.T) {
	res := predictOffline(t, Config{FieldManager: "ci", Methods: []Method{Apply, ApplyForce}},
		Input{Desired: desiredWeb(t, "", "nginx:2")}, liveWeb(t))
	want := []managedfields.Conflict{
		{Field: ".spec.replicas", Manager: "hpa", Operation: "Update", APIVersion: "apps/v1"},
		{Field: `.spec.template.spec.containers[name="nginx"].image`, Manager: "kubectl-create", Operation: "Update", APIVersion: "apps/v1"},
	}
	if diff := cmp.Diff(want, res.Methods[0].Conflicts); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
	force := res.Methods[1]
	wantClobbered := []Ownership{
		{Manager: "hpa", Operation: "Update", Fields: []string{".spec.replicas"}},
		{Manager: "kubectl-create", Operation: "Update", Fields: []string{`.spec.template.spec.containers[name="nginx"].image`}},
	}
	if diff := cmp.Diff(wantClobbered, force.Clobbered); diff != "" {
		t.Errorf("clobbered (-want +got):\n%s", diff)
	}
	if !force.GenerationBumped {
		t.Errorf("forced apply: generation not bumped")
	}
}

func TestPredictOfflineGivenPatches(t *testing.T) {
	tests := []struct {
		name   string
		pt     PatchType
		patch  string
		method Method
		want   Verdict
		code   int
	}{
		{"failing json patch test", PatchJSON, `[{"op":"test","path":"/spec/replicas","value":2}]`, JSONPatch, Invalid, 422},
		{"json patch taking replicas", PatchJSON, `[{"op":"replace","path":"/spec/replicas","value":3}]`, JSONPatch, Clobber, 200},
		{"merge patch without change", PatchMerge, `{"spec":{"replicas":4}}`, MergePatch, OK, 200},
		{"strategic merge patch of an image", PatchStrategic, `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:9"}]}}}}`, StrategicMergePatch, Clobber, 200},
		{"apply co-owning the same value", PatchApply, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":4}}`, Apply, OK, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := predictOffline(t, Config{FieldManager: "ci"}, Input{Patch: []byte(tt.patch), PatchType: tt.pt}, liveWeb(t))
			got := res.Methods[0]
			if got.Method != tt.method || got.Verdict != tt.want || got.Code != tt.code {
				t.Errorf("got %s %s %d (%s), want %s %s %d", got.Method, got.Verdict, got.Code, got.Reason, tt.method, tt.want, tt.code)
			}
		})
	}
}

func TestPredictOfflineNoOp(t *testing.T) {
	live := liveWeb(t)
	desired := live.DeepCopy()
	desired.SetManagedFields(nil)
	res := predictOffline(t, Config{FieldManager: "ci", Methods: []Method{Update, MergePatch}}, Input{Desired: desired}, live)
	for _, m := range res.Methods {
		if m.Verdict != OK || !m.NoOp || m.GenerationBumped || len(m.Changed) != 0 {
			t.Errorf("%s: want a no-op, got %+v", m.Method, m)
		}
	}
}

func TestWithRVRefusesNull(t *testing.T) {
	if _, err := withRV([]byte("null"), "7"); err == nil || !strings.Contains(err.Error(), "JSON object") {
		t.Fatalf("withRV(null) = %v, want an error saying a merge patch is an object", err)
	}
	got, err := withRV([]byte(`{"spec":{"replicas":3}}`), "7")
	if err != nil || string(got) != `{"metadata":{"resourceVersion":"7"},"spec":{"replicas":3}}` {
		t.Fatalf("withRV = %s, %v", got, err)
	}
}

// newOffline is NewOffline with the API server's defaulting and
// validation, as the command runs it.
func newOffline(tc managedfields.TypeConverter) *Offline {
	o := NewOffline(tc)
	o.Rules = serverrules.Rules{}
	return o
}
