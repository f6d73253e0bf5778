package apiserver

import (
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules"

	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

var (
	cmGVK     = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	deployGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
)

func newServer(t *testing.T) *Server {
	t.Helper()
	reg, err := NewRegistry(serverrules.Rules{}, CustomType(widgetGVK, "widgets", true, true))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{KV: mvcc.NewDefault(), Registry: reg, FieldManager: NewManagedFields()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func obj(gvk schema.GroupVersionKind, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	u.SetGroupVersionKind(gvk)
	u.SetName(name)
	u.SetNamespace("default")
	return u
}

func TestUpdateConflictAndNoOp(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	created, err := s.Create(ctx, obj(cmGVK, "c", map[string]any{"data": map[string]any{"k": "1"}}), WriteOptions{FieldManager: "kubectl-create"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, obj(cmGVK, "c", nil), WriteOptions{FieldManager: "x"}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("want AlreadyExists, got %v", err)
	}
	a, _ := s.Get(ctx, cmGVK, "default", "c")
	b, _ := s.Get(ctx, cmGVK, "default", "c")
	b.Object["data"] = map[string]any{"k": "2"}
	bw, err := s.Update(ctx, b, WriteOptions{FieldManager: "b"})
	if err != nil {
		t.Fatal(err)
	}
	a.Object["data"] = map[string]any{"k": "3"}
	_, err = s.Update(ctx, a, WriteOptions{FieldManager: "a"})
	want := `Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again`
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Fatalf("want the API server's 409, got %v", err)
	}
	// Same bytes again: no new revision.
	again, _ := s.Get(ctx, cmGVK, "default", "c")
	res, err := s.Update(ctx, again, WriteOptions{FieldManager: "b"})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{created.GetResourceVersion(), bw.GetResourceVersion(), res.GetResourceVersion()}
	if d := cmp.Diff([]string{"2", "3", "3"}, got); d != "" {
		t.Errorf("resourceVersions (-want +got):\n%s", d)
	}
	// An unconditional update of a ConfigMap is allowed; of a custom resource, 422.
	again.SetResourceVersion("")
	again.Object["data"] = map[string]any{"k": "4"}
	if _, err := s.Update(ctx, again, WriteOptions{FieldManager: "b"}); err != nil {
		t.Errorf("unconditional ConfigMap update: %v", err)
	}
	w, err := s.Create(ctx, obj(widgetGVK, "w", map[string]any{"spec": map[string]any{"size": int64(1)}}), WriteOptions{FieldManager: "x"})
	if err != nil {
		t.Fatal(err)
	}
	w.SetResourceVersion("")
	_, err = s.Update(ctx, w, WriteOptions{FieldManager: "x"})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.resourceVersion: Invalid value: 0: must be specified for an update") {
		t.Errorf("want 422 for an unconditional custom resource update, got %v", err)
	}
}

// deploySpec is a valid Deployment spec: the server's validation runs.
func deploySpec(replicas int64) map[string]any {
	labels := map[string]any{"app": "d"}
	return map[string]any{
		"replicas": replicas,
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{
			"metadata": map[string]any{"labels": labels},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "a:1"}}},
		},
	}
}

func TestGenerationAndStatus(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	d, err := s.Create(ctx, obj(deployGVK, "d", map[string]any{"spec": deploySpec(1)}), WriteOptions{FieldManager: "c"})
	if err != nil {
		t.Fatal(err)
	}
	gens := []int64{d.GetGeneration()}
	step := func(sub string, f func(u *unstructured.Unstructured)) {
		u, _ := s.Get(ctx, deployGVK, "default", "d")
		f(u)
		out, err := s.Update(ctx, u, WriteOptions{FieldManager: "c", Subresource: sub})
		if err != nil {
			t.Fatal(err)
		}
		gens = append(gens, out.GetGeneration())
	}
	step("", func(u *unstructured.Unstructured) { u.Object["spec"].(map[string]any)["replicas"] = int64(2) })
	step("", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"a": "b"}) })
	step("", func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"a": "b"}) })
	step("status", func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"replicas": int64(2)} })
	step("", func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"replicas": int64(9)} })
	if d := cmp.Diff([]int64{1, 2, 2, 3, 3, 3}, gens); d != "" {
		t.Errorf("generations (-want +got):\n%s", d)
	}
	u, _ := s.Get(ctx, deployGVK, "default", "d")
	if n, _, _ := unstructured.NestedInt64(u.Object, "status", "replicas"); n != 2 {
		t.Errorf("a main-resource write must not change status: got %d", n)
	}
}

func TestPatchesAndApply(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	if _, err := s.Create(ctx, obj(deployGVK, "d", map[string]any{"spec": deploySpec(1)}), WriteOptions{FieldManager: "kubectl-create"}); err != nil {
		t.Fatal(err)
	}
	patch := func(pt types.PatchType, p string, force bool, mgr string) error {
		_, err := s.Patch(ctx, deployGVK, "default", "d", pt, []byte(p), PatchOptions{WriteOptions: WriteOptions{FieldManager: mgr}, Force: force})
		return err
	}
	if err := patch(types.MergePatchType, `{"metadata":{"resourceVersion":"1"},"spec":{"replicas":2}}`, false, "m"); !apierrors.IsConflict(err) {
		t.Errorf("a merge patch with a stale resourceVersion should 409, got %v", err)
	}
	if err := patch(types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"s:1"}]}}}}`, false, "smp"); err != nil {
		t.Fatal(err)
	}
	if err := patch(types.JSONPatchType, `[{"op":"test","path":"/spec/template/spec/containers/0/name","value":"app"}]`, false, "j"); err == nil {
		t.Errorf("the strategic merge patch put side first? want the JSON patch test to fail, it passed")
	}
	err := patch(types.ApplyPatchType, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":5}}`, false, "hpa")
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `conflict with "kubectl-create"`) {
		t.Errorf("want an apply conflict with kubectl-create, got %v", err)
	}
	if err := patch(types.ApplyPatchType, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":5}}`, true, "hpa"); err != nil {
		t.Errorf("forced apply: %v", err)
	}
	u, _ := s.Get(ctx, deployGVK, "default", "d")
	var managers []string
	for _, e := range u.GetManagedFields() {
		managers = append(managers, e.Manager+"/"+string(e.Operation))
	}
	if d := cmp.Diff([]string{"hpa/Apply", "kubectl-create/Update", "smp/Update"}, managers); d != "" {
		t.Errorf("managedFields (-want +got):\n%s", d)
	}
}

func TestDeleteListWatchAndCompaction(t *testing.T) {
	ctx := context.Background()
	s := newServer(t)
	for _, n := range []string{"a", "b", "c"} {
		if _, err := s.Create(ctx, obj(cmGVK, n, nil), WriteOptions{FieldManager: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Delete(ctx, cmGVK, "default", "a", Preconditions{ResourceVersion: "3"}); !apierrors.IsConflict(err) ||
		!strings.Contains(err.Error(), "the ResourceVersion in the precondition (3) does not match the ResourceVersion in record (2)") {
		t.Errorf("want the precondition 409, got %v", err)
	}
	del, err := s.Delete(ctx, cmGVK, "default", "a", Preconditions{ResourceVersion: "2"})
	if err != nil || del.GetResourceVersion() != "5" {
		t.Fatalf("delete: rv %s, %v", del.GetResourceVersion(), err)
	}
	l, err := s.List(ctx, cmGVK, "default", ListOptions{Limit: 1})
	if err != nil || len(l.Items) != 1 || l.GetResourceVersion() != "5" || l.GetContinue() == "" {
		t.Fatalf("paged list: %v %+v", err, l)
	}
	l2, err := s.List(ctx, cmGVK, "default", ListOptions{Continue: l.GetContinue()})
	if err != nil || len(l2.Items) != 1 || l2.Items[0].GetName() != "c" {
		t.Fatalf("second page: %v", err)
	}
	if err := s.Compact(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx, cmGVK, "default", ListOptions{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchExact}); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("an Exact list below the compaction should be 410, got %v", err)
	}
	w, err := s.Watch(ctx, cmGVK, "default", "2")
	if err != nil {
		t.Fatal(err)
	}
	evs := w.Next()
	if len(evs) != 1 || evs[0].Type != watch.Error || !strings.Contains(evs[0].Object.(*metav1.Status).Message, "too old resource version: 2 (4)") {
		t.Errorf("want one 410 ERROR event, got %+v", evs)
	}
	w, err = s.Watch(ctx, cmGVK, "default", "5")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, cmGVK, "default", "b", Preconditions{}); err != nil {
		t.Fatal(err)
	}
	evs = w.Next()
	if len(evs) != 1 || evs[0].Type != watch.Deleted || evs[0].Object.(*unstructured.Unstructured).GetResourceVersion() != "6" {
		t.Errorf("want DELETED at the deletion revision 6, got %+v", evs)
	}
}
