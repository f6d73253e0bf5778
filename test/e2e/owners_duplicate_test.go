//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// scalerCRD is a custom resource with the scale subresource.
var scalerCRD = crdManifest("dup.example.com", "Scaler", `subresources:
  status: {}
  scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
schema:
  openAPIV3Schema:
    type: object
    properties:
      spec:
        type: object
        properties:
          replicas: {type: integer}
          mode: {type: string}
      status:
        type: object
        properties:
          replicas: {type: integer}
`)

// TestOwnersDuplicateScaleEntries: a no-op /scale patch on a custom
// resource can leave two managedFields entries for one manager and
// operation (REFERENCE.md §9). owners flags the pair (DuplicateEntry) and
// says who owns .spec.replicas as the API server's field manager decides:
// checked against the server itself, whose non-forced apply of
// .spec.replicas by another manager conflicts exactly when a manager other
// than the applier owns it.
func TestOwnersDuplicateScaleEntries(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.KubectlStdin(t, scalerCRD, "apply", "-f", "-")
	cluster.MustKubectl(t, "wait", "--for=condition=Established", "crd/scalers.dup.example.com", "--timeout=60s")
	gvr := schema.GroupVersionResource{Group: "dup.example.com", Version: "v1", Resource: "scalers"}
	ri := cluster.Dynamic(t, "e2e-dup").Resource(gvr).Namespace(ns)
	ctx := context.Background()
	cluster.KubectlStdin(t, "apiVersion: dup.example.com/v1\nkind: Scaler\nmetadata: {name: s}\nspec: {replicas: 2, mode: a}\n", "create", "-n", ns, "-f", "-")
	// The manager that created it patches /scale to the value it has: on
	// kube-apiserver 1.36.3 this leaves two kubectl-create Update entries,
	// the first (without a time) owning .spec.replicas.
	if _, err := ri.Patch(ctx, "s", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{FieldManager: "kubectl-create"}, "scale"); err != nil {
		t.Fatalf("patch /scale: %v", err)
	}
	live, err := ri.Get(ctx, "s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	dup := false
	for _, e := range live.GetManagedFields() {
		id := e.Manager + "/" + string(e.Operation) + "/" + e.Subresource
		if e.Operation != metav1.ManagedFieldsOperationApply {
			id += "/" + e.APIVersion
		}
		ids[id]++
		dup = dup || ids[id] > 1
	}
	mf, _ := json.Marshal(live.GetManagedFields())
	if !dup {
		t.Fatalf("the API server left no duplicate managedFields entry; the scene does not reproduce REFERENCE.md §9: %s", mf)
	}
	t.Logf("the server's managedFields: %s", mf)

	r := cluster.RV(t, "owners", "scalers.dup.example.com/s", "-n", ns, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("owners: %s", r)
	}
	var rep struct {
		Items []struct {
			Fields []struct {
				Path   string
				Owners []struct{ Manager string }
			}
			Hazards []struct{ Type string }
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || len(rep.Items) != 1 {
		t.Fatalf("owners -o json: %v\n%s", err, r.Stdout)
	}
	var hazards []string
	for _, h := range rep.Items[0].Hazards {
		hazards = append(hazards, h.Type)
	}
	if !slices.Contains(hazards, "DuplicateEntry") {
		t.Errorf("owners shows hazards %v, no DuplicateEntry:\n%s", hazards, r.Stdout)
	}
	owned := false
	for _, f := range rep.Items[0].Fields {
		if f.Path == ".spec.replicas" && len(f.Owners) > 0 {
			owned = true
		}
	}
	apply := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "dup.example.com/v1", "kind": "Scaler",
		"metadata": map[string]any{"name": "s", "namespace": ns},
		"spec":     map[string]any{"replicas": int64(7)},
	}}
	_, err = ri.Apply(ctx, "s", apply, metav1.ApplyOptions{FieldManager: "other", DryRun: []string{metav1.DryRunAll}})
	conflict := apierrors.IsConflict(err)
	if err != nil && !conflict {
		t.Fatalf("dry-run apply: %v", err)
	}
	if owned != conflict {
		t.Errorf("owners says .spec.replicas is owned: %v; the server's apply by another manager conflicts: %v (%v)", owned, conflict, err)
	}
}
