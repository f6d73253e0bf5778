package managedfields

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          metadata:
            type: object
          spec:
            type: object
            properties:
              size: {type: integer}
`

const richMeta = `
  name: w
  namespace: ns
  generateName: w-
  uid: 1d8b0c1e-0000-4000-8000-000000000001
  resourceVersion: "7"
  generation: 3
  creationTimestamp: "2026-11-24T10:00:00Z"
  labels: {a: b, c: d}
  annotations: {note: hello}
  finalizers: [example.com/one, example.com/two]
  ownerReferences:
  - {apiVersion: v1, kind: ConfigMap, name: o1, uid: u1, controller: true, blockOwnerDeletion: true}
  - {apiVersion: v1, kind: ConfigMap, name: o2, uid: u2}
`

// metaSet returns the field set of obj's metadata under tc.
func metaSet(t *testing.T, tc TypeConverter, doc string) *fieldpath.Set {
	t.Helper()
	v, err := tc.ObjectToTyped(mustObj(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	set, err := v.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	md := "metadata"
	return set.WithPrefix(fieldpath.PathElement{FieldName: &md})
}

// TestCRDMetadataMatchesObjectMeta holds a custom resource's metadata to
// the built-in schema's ObjectMeta: the same fields, list items keyed the
// same way (finalizers by value, ownerReferences by uid), whatever the CRD
// says of metadata.
func TestCRDMetadataMatchesObjectMeta(t *testing.T) {
	tc, err := ParseSchema([]byte(widgetCRD))
	if err != nil {
		t.Fatal(err)
	}
	builtin := metaSet(t, BuiltinTypeConverter(), "apiVersion: v1\nkind: ConfigMap\nmetadata:"+richMeta)
	crd := metaSet(t, tc, "apiVersion: example.com/v1\nkind: Widget\nmetadata:"+richMeta+"spec: {size: 1}\n")
	if !builtin.Equals(crd) {
		t.Fatalf("metadata field sets differ:\nbuilt-in ObjectMeta: %s\ncustom resource:     %s", builtin, crd)
	}
	for _, want := range []string{`.finalizers[="example.com/one"]`, `.ownerReferences[uid="u1"]`} {
		if !strings.Contains(crd.String(), want) {
			t.Errorf("custom resource metadata set %s lacks %s", crd, want)
		}
	}
}

// TestCRDFinalizersAreASet: two appliers each owning one finalizer do not
// conflict, and both finalizers stay (an atomic list would conflict).
func TestCRDFinalizersAreASet(t *testing.T) {
	tc, err := ParseSchema([]byte(widgetCRD))
	if err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	fm, err := NewFieldManager(tc, gvk)
	if err != nil {
		t.Fatal(err)
	}
	first, err := fm.Apply(NewEmpty(gvk), mustObj(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, finalizers: [a.example.com/x]}\n"), "one", false)
	if err != nil {
		t.Fatal(err)
	}
	second, err := fm.Apply(first, mustObj(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, finalizers: [b.example.com/y]}\n"), "two", false)
	if err != nil {
		t.Fatalf("a second applier's own finalizer conflicts: %v", err)
	}
	if diff := cmp.Diff([]string{"a.example.com/x", "b.example.com/y"}, second.GetFinalizers()); diff != "" {
		t.Errorf("finalizers (-want +got):\n%s", diff)
	}
}
