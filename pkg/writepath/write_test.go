package writepath

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func TestParseMethod(t *testing.T) {
	for _, m := range Methods {
		if got, ok := ParseMethod(string(m)); !ok || got != m {
			t.Errorf("ParseMethod(%q) = %q, %v", m, got, ok)
		}
	}
	if got, ok := ParseMethod("update-unconditional"); !ok || got != UpdateNoRV {
		t.Errorf("ParseMethod(update-unconditional) = %q, %v; want update-no-rv", got, ok)
	}
	if _, ok := ParseMethod("watch"); ok {
		t.Error("ParseMethod(watch): watch does not write")
	}
}

// deployType is the Deployment's registry rules, without the server's
// defaulting and validation (BuiltinTypes(nil)), so the rules' tests can
// write small objects.
func deployType() *Type {
	for _, t := range BuiltinTypes(nil) {
		if t.GVK.Kind == "Deployment" {
			return &t
		}
	}
	panic("no Deployment")
}

// stored is a Deployment at resourceVersion 11, generation 2, with a
// status.
func stored() *Stored {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default", "uid": "u-1", "generation": int64(2),
			"creationTimestamp": "2026-01-01T00:00:00Z", "resourceVersion": "11"},
		"spec":   map[string]any{"replicas": int64(2)},
		"status": map[string]any{"replicas": int64(2)},
	}}
	return &Stored{Object: u, ResourceVersion: "11"}
}

func TestUpdateRules(t *testing.T) {
	tests := []struct {
		name     string
		change   func(u *unstructured.Unstructured)
		wantCode int
		wantGen  int64
	}{
		{"stale resourceVersion", func(u *unstructured.Unstructured) { u.SetResourceVersion("10") }, http.StatusConflict, 0},
		{"not a number", func(u *unstructured.Unstructured) { u.SetResourceVersion("x") }, http.StatusBadRequest, 0},
		{"spec change bumps", func(u *unstructured.Unstructured) { u.Object["spec"] = map[string]any{"replicas": int64(3)} }, 0, 3},
		{"label change does not", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"a": "b"}) }, 0, 2},
		{"annotation change does", func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"a": "b"}) }, 0, 3},
		{"no resourceVersion: last write wins", func(u *unstructured.Unstructured) { u.SetResourceVersion("") }, 0, 2},
		{"status is the subresource's", func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"replicas": int64(9)} }, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := stored()
			obj := cur.Object.DeepCopy()
			tt.change(obj)
			out, err := (&Writer{}).Update(deployType(), cur, obj, Options{FieldManager: "m"})
			if tt.wantCode != 0 {
				if code := errCode(err); code != tt.wantCode {
					t.Fatalf("want %d, got %v", tt.wantCode, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := out.GetGeneration(); g != tt.wantGen {
				t.Errorf("generation %d, want %d", g, tt.wantGen)
			}
			if n, _, _ := unstructured.NestedInt64(out.Object, "status", "replicas"); n != 2 || out.GetResourceVersion() != "11" || out.GetUID() != "u-1" {
				t.Errorf("status.replicas %d, resourceVersion %q, uid %q: want the stored 2, 11, u-1", n, out.GetResourceVersion(), out.GetUID())
			}
		})
	}
	custom := CustomType(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, false)
	obj := stored().Object.DeepCopy()
	obj.SetResourceVersion("")
	if _, err := (&Writer{}).Update(&custom, stored(), obj, Options{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "must be specified for an update") {
		t.Errorf("an unconditional update of a custom resource: want 422, got %v", err)
	}
}

func errCode(err error) int {
	if s, ok := err.(apierrors.APIStatus); ok {
		return int(s.Status().Code)
	}
	return -1
}

func TestPatchRules(t *testing.T) {
	tests := []struct {
		name, patch string
		pt          types.PatchType
		wantCode    int
	}{
		{"merge patch with a stale lock", `{"metadata":{"resourceVersion":"10"}}`, types.MergePatchType, http.StatusConflict},
		{"merge patch with the current lock", `{"metadata":{"resourceVersion":"11"},"spec":{"replicas":3}}`, types.MergePatchType, 0},
		{"merge patch dropping the lock", `{"metadata":{"resourceVersion":null},"spec":{"replicas":3}}`, types.MergePatchType, 0},
		{"rename", `{"metadata":{"name":"other"}}`, types.MergePatchType, http.StatusBadRequest},
		{"failed test", `[{"op":"test","path":"/spec/replicas","value":5}]`, types.JSONPatchType, http.StatusUnprocessableEntity},
		{"strategic", `{"spec":{"replicas":3}}`, types.StrategicMergePatchType, 0},
		{"apply without a field manager", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"}}`, types.ApplyPatchType, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := (&Writer{}).Patch(deployType(), stored(), "default", "web", tt.pt, []byte(tt.patch), Options{})
			if tt.wantCode != 0 {
				if errCode(err) != tt.wantCode {
					t.Fatalf("want %d, got %v", tt.wantCode, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]any{"replicas": int64(3)}, out.Object["spec"]); diff != "" || out.GetGeneration() != 3 {
				t.Errorf("generation %d, spec (-want +got):\n%s", out.GetGeneration(), diff)
			}
		})
	}
	custom := CustomType(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, false)
	if _, err := (&Writer{}).Patch(&custom, stored(), "default", "web", types.StrategicMergePatchType, []byte(`{}`), Options{}); errCode(err) != http.StatusUnsupportedMediaType {
		t.Errorf("a strategic merge patch of a custom resource: want 415, got %v", err)
	}
}

func TestApplyIgnoresStatusWithASubresource(t *testing.T) {
	w := &Writer{FieldManager: NewManagedFields(nil)}
	cfg := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":3},"status":{"replicas":7}}`
	out, err := w.Patch(deployType(), stored(), "default", "web", types.ApplyPatchType, []byte(cfg), Options{FieldManager: "ci", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(out.Object, "status", "replicas"); n != 2 {
		t.Errorf("status.replicas %d, want the stored 2", n)
	}
	for _, e := range out.GetManagedFields() {
		if e.Manager == "ci" && strings.Contains(string(e.FieldsV1.Raw), "status") {
			t.Errorf("%s owns status fields: %s", e.Manager, e.FieldsV1.Raw)
		}
	}
}

// TestEmptyMetaDroppedForCustomResources states the API server's rule for
// empty metadata maps and lists in a request body, the same for custom
// resources as for built-in kinds: a custom resource's metadata is decoded
// into ObjectMeta and back (apiextensions-apiserver's objectmeta
// coercion), so labels: {}, annotations: {} and finalizers: [] are gone
// before the field manager compares. An update that sends annotations: {}
// over an object whose annotations an applier owns takes nothing from it,
// and an update that empties them removes the applier's annotations (and
// the writer owns nothing). The e2e test TestPredictEdgeCasesAgree holds
// this to the real server.
func TestEmptyMetaDroppedForCustomResources(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	ct := CustomType(gvk, "widgets", true, false)
	w := &Writer{FieldManager: NewManagedFields(nil)}
	applied := func(annotations string) *Stored {
		cfg := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","annotations":` + annotations + `},"spec":{"size":1}}`
		out, err := w.Patch(&ct, nil, "ns", "w", types.ApplyPatchType, []byte(cfg), Options{FieldManager: "applier"})
		if err != nil {
			t.Fatal(err)
		}
		out.SetResourceVersion("5")
		return &Stored{Object: out, ResourceVersion: "5"}
	}
	owned := func(u *unstructured.Unstructured, manager string) string {
		for _, e := range u.GetManagedFields() {
			if e.Manager == manager {
				return string(e.FieldsV1.Raw)
			}
		}
		return ""
	}
	// The applier of annotations: {} owns the map, which is not stored.
	cur := applied(`{}`)
	if got := owned(cur.Object, "applier"); !strings.Contains(got, `"f:annotations":{}`) {
		t.Fatalf("the applier of annotations: {} owns %s, want f:annotations", got)
	}
	if _, ok := cur.Object.Object["metadata"].(map[string]any)["annotations"]; ok {
		t.Fatalf("the stored object keeps annotations: %v", cur.Object.Object["metadata"])
	}
	obj := cur.Object.DeepCopy()
	obj.SetManagedFields(nil)
	obj.SetAnnotations(map[string]string{})
	obj.SetLabels(map[string]string{})
	obj.SetFinalizers([]string{})
	_ = unstructured.SetNestedField(obj.Object, int64(2), "spec", "size")
	out, err := w.Update(&ct, cur, obj, Options{FieldManager: "writer"})
	if err != nil {
		t.Fatal(err)
	}
	if got := owned(out, "applier"); !strings.Contains(got, `"f:annotations":{}`) {
		t.Errorf("after an update with annotations: {}, the applier owns %s; want f:annotations kept", got)
	}
	if got := owned(out, "writer"); strings.Contains(got, "f:metadata") {
		t.Errorf("the writer owns %s; want no metadata", got)
	}
	md := out.Object["metadata"].(map[string]any)
	for _, k := range []string{"annotations", "labels", "finalizers"} {
		if _, ok := md[k]; ok {
			t.Errorf("the stored object has metadata.%s: %v", k, md[k])
		}
	}
	// annotations {x: y} emptied by an update: the applier loses them.
	cur = applied(`{"x":"y"}`)
	obj = cur.Object.DeepCopy()
	obj.SetManagedFields(nil)
	obj.SetAnnotations(map[string]string{})
	if out, err = w.Update(&ct, cur, obj, Options{FieldManager: "writer"}); err != nil {
		t.Fatal(err)
	}
	if got := owned(out, "applier"); strings.Contains(got, "f:annotations") || owned(out, "writer") != "" {
		t.Errorf("after emptying the annotations, the applier owns %s and the writer %q; want no annotations and no writer entry", got, owned(out, "writer"))
	}
	// A merge patch of annotations: {} is decoded the same way.
	cur = applied(`{}`)
	if out, err = w.Patch(&ct, cur, "ns", "w", types.MergePatchType, []byte(`{"metadata":{"annotations":{}},"spec":{"size":3}}`), Options{FieldManager: "writer"}); err != nil {
		t.Fatal(err)
	}
	if got := owned(out, "applier"); !strings.Contains(got, `"f:annotations":{}`) {
		t.Errorf("after a merge patch with annotations: {}, the applier owns %s; want f:annotations kept", got)
	}
}
