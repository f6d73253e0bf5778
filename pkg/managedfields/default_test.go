package managedfields

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestDefaultTypesCustomResources: without a schema, a custom resource's
// metadata is ObjectMeta (two appliers' finalizers are a set, not one
// atomic list that conflicts) and its other fields are deduced (a list is
// atomic), as the server types a CRD whose schema keeps unknown fields.
// Built-in kinds keep the built-in schema.
func TestDefaultTypesCustomResources(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "other.example.com", Version: "v1", Kind: "Gizmo"}
	fm, err := NewFieldManager(DefaultTypeConverter(), gvk)
	if err != nil {
		t.Fatal(err)
	}
	first, err := fm.Apply(NewEmpty(gvk), mustObj(t, "apiVersion: other.example.com/v1\nkind: Gizmo\nmetadata: {name: g, finalizers: [a.example.com/x]}\nspec: {items: [a, b]}\n"), "one", false)
	if err != nil {
		t.Fatal(err)
	}
	second, err := fm.Apply(first, mustObj(t, "apiVersion: other.example.com/v1\nkind: Gizmo\nmetadata: {name: g, finalizers: [b.example.com/y]}\n"), "two", false)
	if err != nil {
		t.Fatalf("a second applier's own finalizer conflicts: %v", err)
	}
	if diff := cmp.Diff([]string{"a.example.com/x", "b.example.com/y"}, second.GetFinalizers()); diff != "" {
		t.Errorf("finalizers (-want +got):\n%s", diff)
	}
	for _, e := range second.GetManagedFields() {
		if e.Manager == "one" && !strings.Contains(string(e.FieldsV1.Raw), `"f:items":{}`) {
			t.Errorf("one owns %s; want the list spec.items as one field", e.FieldsV1.Raw)
		}
	}
	builtin := metaSet(t, DefaultTypeConverter(), "apiVersion: v1\nkind: ConfigMap\nmetadata:"+richMeta)
	if want := metaSet(t, BuiltinTypeConverter(), "apiVersion: v1\nkind: ConfigMap\nmetadata:"+richMeta); !builtin.Equals(want) {
		t.Errorf("a ConfigMap's metadata: %s, want the built-in schema's %s", builtin, want)
	}
}
