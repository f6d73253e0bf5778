package predict

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

var cmGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// cmManifest is a ConfigMap manifest with data.
func cmManifest(data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "namespace": "default"},
		"data":     data,
	}}
}

// liveCM builds a ConfigMap client-side applied with data a=1, b=1 (with
// or without the annotation kubectl keeps), then updated by "ctrl" with
// its own changes.
func liveCM(t *testing.T, annotate bool, ctrl map[string]any) *unstructured.Unstructured {
	t.Helper()
	fm, err := managedfields.NewFieldManager(managedfields.BuiltinTypeConverter(), cmGVK)
	if err != nil {
		t.Fatal(err)
	}
	first := cmManifest(map[string]any{"a": "1", "b": "1"})
	if annotate {
		rq, err := clientApplyRequest(Config{}, Input{Desired: first}, nil)
		if err != nil {
			t.Fatal(err)
		}
		first = rq.create
	}
	created, err := fm.Update(managedfields.NewEmpty(cmGVK), first, ClientApplyManager, "")
	if err != nil {
		t.Fatal(err)
	}
	created.SetResourceVersion("10")
	next := created.DeepCopy()
	next.SetManagedFields(nil)
	for k, v := range ctrl {
		_ = unstructured.SetNestedField(next.Object, v, "data", k)
	}
	live, err := fm.Update(created, next, "ctrl", "")
	if err != nil {
		t.Fatal(err)
	}
	live.SetResourceVersion("11")
	return live
}

func TestPredictClientApply(t *testing.T) {
	const lastApplied = `{"apiVersion":"v1","data":{"a":"2"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"cm","namespace":"default"}}` + "\n"
	for _, tc := range []struct {
		name    string
		live    func(t *testing.T) *unstructured.Unstructured
		desired map[string]any
		want    MethodResult
	}{{
		name:    "a field left the manifest: deleted; another manager's field kept",
		live:    func(t *testing.T) *unstructured.Unstructured { return liveCM(t, true, map[string]any{"c": "1"}) },
		desired: map[string]any{"a": "2"},
		want: MethodResult{Verdict: OK, Code: 200,
			ClientApply: &ClientApplyResult{Action: ActionPatch, PatchType: PatchStrategic, Deleted: []string{".data.b"}, LastApplied: lastApplied},
			Changed: []FieldChange{{".data.a", "modified"}, {".data.b", "removed"},
				{".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration", "modified"}}},
	}, {
		name:    "another manager's value overwritten",
		live:    func(t *testing.T) *unstructured.Unstructured { return liveCM(t, true, map[string]any{"a": "x"}) },
		desired: map[string]any{"a": "2", "b": "1"},
		want: MethodResult{Verdict: Clobber, Code: 200, Reason: "succeeds, but 1 field(s) owned by other managers are overwritten or removed",
			ClientApply: &ClientApplyResult{Action: ActionPatch, PatchType: PatchStrategic,
				LastApplied: `{"apiVersion":"v1","data":{"a":"2","b":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"cm","namespace":"default"}}` + "\n"},
			Clobbered: []Ownership{{Manager: "ctrl", Operation: "Update", Fields: []string{".data.a"}}},
			Changed: []FieldChange{{".data.a", "modified"},
				{".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration", "modified"}}},
	}, {
		name:    "no annotation: nothing deleted, the annotation added, kubectl warns",
		live:    func(t *testing.T) *unstructured.Unstructured { return liveCM(t, false, nil) },
		desired: map[string]any{"a": "2"},
		want: MethodResult{Verdict: OK, Code: 200,
			ClientApply: &ClientApplyResult{Action: ActionPatch, PatchType: PatchStrategic, AnnotationMissing: true,
				Warning:     "Warning: resource configmaps/cm is missing the kubectl.kubernetes.io/last-applied-configuration annotation which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically.",
				LastApplied: lastApplied},
			Changed: []FieldChange{{".data.a", "modified"},
				{".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration", "added"}}},
	}, {
		name:    "the same manifest again: kubectl sends nothing",
		live:    func(t *testing.T) *unstructured.Unstructured { return liveCM(t, true, nil) },
		desired: map[string]any{"a": "1", "b": "1"},
		want: MethodResult{Verdict: OK, NoOp: true, Reason: "kubectl sends nothing: the three-way patch is empty (kubectl prints unchanged)",
			ClientApply: &ClientApplyResult{Action: ActionUnchanged, PatchType: PatchStrategic,
				LastApplied: `{"apiVersion":"v1","data":{"a":"1","b":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"cm","namespace":"default"}}` + "\n"}},
	}, {
		name:    "does not exist: created with the annotation",
		live:    func(*testing.T) *unstructured.Unstructured { return nil },
		desired: map[string]any{"a": "2"},
		want: MethodResult{Verdict: OK, Code: 201,
			ClientApply: &ClientApplyResult{Action: ActionCreate, LastApplied: lastApplied}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := newOffline(nil).Executor(cmGVK, "cm", tc.live(t))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Predict(context.Background(), Config{Methods: []Method{ClientApply}}, Input{Desired: cmManifest(tc.desired)}, ex)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Methods[0]
			tc.want.Method, tc.want.Manager = ClientApply, ClientApplyManager
			got.Request, got.OwnershipChanges = "", nil
			if tc.want.Code == 201 {
				got.Changed = nil
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestClientApplyRequest checks the patch kubectl sends: the fields that
// left the manifest set to null, the annotation replaced, other managers'
// fields left out; a JSON merge patch for a custom resource.
func TestClientApplyRequest(t *testing.T) {
	live := liveCM(t, true, map[string]any{"c": "1"})
	rq, err := clientApplyRequest(Config{}, Input{Desired: cmManifest(map[string]any{"a": "2"})}, live)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"data":{"a":"2","b":null},"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"data\":{\"a\":\"2\"},\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{},\"name\":\"cm\",\"namespace\":\"default\"}}\n"}}}`
	if diff := cmp.Diff(want, string(rq.data)); diff != "" || rq.pt != types.StrategicMergePatchType || rq.manager != ClientApplyManager {
		t.Errorf("%s patch by %s (-want +got):\n%s", rq.pt, rq.manager, diff)
	}
	cr := live.DeepCopy()
	cr.SetAPIVersion("example.com/v1")
	cr.SetKind("Gadget")
	desired := cmManifest(map[string]any{"a": "2"})
	desired.SetAPIVersion("example.com/v1")
	desired.SetKind("Gadget")
	if rq, err = clientApplyRequest(Config{FieldManager: "ci"}, Input{Desired: desired}, cr); err != nil {
		t.Fatal(err)
	}
	if rq.pt != types.MergePatchType || rq.manager != "ci" {
		t.Errorf("custom resource: %s patch by %s, want a merge patch by ci", rq.pt, rq.manager)
	}
	desired.SetName("other")
	if rq, err = clientApplyRequest(Config{}, Input{Desired: desired}, cr); err != nil || rq.skipVerdict != Invalid {
		t.Errorf("a renamed custom resource: %v, %q, want invalid before sending", err, rq.skip)
	}
}

// TestPredictCSAUpgrade checks what the move to server-side apply does to
// an object last applied client-side: the conflicts with
// kubectl-client-side-apply, the fields the managedFields upgrade moves,
// and the fields the apply after it deletes.
func TestPredictCSAUpgrade(t *testing.T) {
	moved := []string{".data.a", ".data.b", ".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration"}
	for _, tc := range []struct {
		name, manager string
		data          map[string]any
		want          *CSAUpgrade
	}{
		{"kubectl, a key dropped", "kubectl", map[string]any{"a": "1"},
			&CSAUpgrade{Managers: []string{ClientApplyManager}, Moved: moved, Deleted: []string{".data.b"}}},
		{"another manager drops the annotation too", "ci", map[string]any{"a": "1", "b": "1"},
			&CSAUpgrade{Managers: []string{ClientApplyManager}, Moved: moved, Deleted: []string{".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration"}}},
		{"another manager's changed value conflicts", "ci", map[string]any{"a": "2", "b": "1"},
			&CSAUpgrade{Managers: []string{ClientApplyManager}, Conflicts: []string{".data.a"}, Moved: moved, Deleted: []string{".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration"}}},
		// The API server forgives kubectl the conflicts on the fields the
		// annotation holds at their live value, and forces them.
		{"kubectl's changed value does not", "kubectl", map[string]any{"a": "2", "b": "1"},
			&CSAUpgrade{Managers: []string{ClientApplyManager}, Moved: []string{".data.b", ".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := newOffline(nil).Executor(cmGVK, "cm", liveCM(t, true, nil))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Predict(context.Background(), Config{FieldManager: tc.manager, Methods: []Method{Apply}}, Input{Desired: cmManifest(tc.data)}, ex)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Methods[0].CSAUpgrade
			if got == nil || got.Advice == "" {
				t.Fatalf("no upgrade or no advice: %+v", got)
			}
			got.Advice = ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	ex, _ := newOffline(nil).Executor(cmGVK, "cm", liveCM(t, false, nil))
	res, err := Predict(context.Background(), Config{FieldManager: "kubectl", Methods: []Method{Apply}}, Input{Desired: cmManifest(map[string]any{"a": "1"})}, ex)
	if err != nil || res.Methods[0].CSAUpgrade != nil {
		t.Errorf("without the annotation: %v, %+v, want no upgrade", err, res.Methods[0].CSAUpgrade)
	}
}

// TestPredictKubectlVerbs checks that --method kubectl predicts each of
// kubectl's verbs with its own field manager: client-side apply takes
// what it changes, server-side apply conflicts on it, replace and edit
// take it.
func TestPredictKubectlVerbs(t *testing.T) {
	ex, err := newOffline(nil).Executor(deployGVK, "web", liveWeb(t))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := ParseMethods([]string{"kubectl"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Predict(context.Background(), Config{Methods: ms, DefaultManager: "kubectl-rv"}, Input{Desired: desiredWeb(t, "", "nginx:2")}, ex)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Method  Method
		Manager string
		Verdict Verdict
	}
	var got []row
	for _, m := range res.Methods {
		got = append(got, row{m.Method, m.Manager, m.Verdict})
	}
	want := []row{
		{ClientApply, "kubectl-client-side-apply", Clobber},
		{ServerSideApply, "kubectl", ApplyConflict},
		{Replace, "kubectl-replace", Clobber},
		{Edit, "kubectl-edit", Clobber},
	}
	if diff := cmp.Diff(want, got); diff != "" || res.FieldManager != "" {
		t.Errorf("field manager %q (-want +got):\n%s", res.FieldManager, diff)
	}
	if ca := res.Methods[0].ClientApply; ca == nil || !ca.AnnotationMissing {
		t.Errorf("client-apply of an object kubectl create made: %+v, want the missing annotation", ca)
	}
	patch := Input{Ref: ObjectRef{Kind: "Deployment", Name: "web"}, Patch: []byte(`{"spec":{"replicas":3}}`), PatchType: PatchMerge}
	res, err = Predict(context.Background(), Config{Methods: ms}, patch, ex)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Methods) != 1 || res.Methods[0].Method != KubectlPatch || res.Methods[0].Manager != "kubectl-patch" || res.Methods[0].Verdict != Clobber {
		t.Errorf("kubectl patch: %+v, want one clobber by kubectl-patch", res.Methods)
	}
}
