package writepath

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// TestDecodeOrDefault: a request body and the result of a JSON or merge
// patch are decoded (Type.Decode: pruned and defaulted), the object a
// server-side apply merged is only defaulted (Type.Default), as on the
// server, where the apply's object passes through the field manager's
// defaulter and no decoder.
func TestDecodeOrDefault(t *testing.T) {
	ct := CustomType(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, false)
	var calls []string
	ct.Decode = func(*unstructured.Unstructured) { calls = append(calls, "decode") }
	ct.Default = func(*unstructured.Unstructured) { calls = append(calls, "default") }
	w := &Writer{FieldManager: NewManagedFields(nil)}
	obj := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "ns", "resourceVersion": "5"}, "spec": map[string]any{"size": int64(1)}}}
		return u
	}
	cur := &Stored{Object: obj(), ResourceVersion: "5"}
	tests := []struct {
		name  string
		write func() error
		want  []string
	}{
		{"create", func() error { _, err := w.Create(&ct, obj(), Options{FieldManager: "m"}); return err }, []string{"decode"}},
		{"update", func() error { _, err := w.Update(&ct, cur, obj(), Options{FieldManager: "m"}); return err }, []string{"decode"}},
		{"merge patch", func() error {
			_, err := w.Patch(&ct, cur, "ns", "w", types.MergePatchType, []byte(`{"spec":{"size":2}}`), Options{FieldManager: "m"})
			return err
		}, []string{"decode"}},
		{"apply over an object", func() error {
			_, err := w.Patch(&ct, cur, "ns", "w", types.ApplyPatchType, []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":3}}`), Options{FieldManager: "a", Force: true})
			return err
		}, []string{"default"}},
		{"apply that creates", func() error {
			_, err := w.Patch(&ct, nil, "ns", "w", types.ApplyPatchType, []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":3}}`), Options{FieldManager: "a"})
			return err
		}, []string{"default"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls = nil
			if err := tt.write(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, calls); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// failingFieldManager fails every update, as the server's field manager
// fails on a custom resource whose value its schema cannot type.
type failingFieldManager struct{}

func (failingFieldManager) Update(*Type, string, *unstructured.Unstructured, *unstructured.Unstructured, string) (*unstructured.Unstructured, error) {
	return nil, errors.New(".spec.size: expected numeric (int or float), got string")
}

func (failingFieldManager) Apply(*Type, *unstructured.Unstructured, *unstructured.Unstructured, string, bool) (*unstructured.Unstructured, error) {
	return nil, errors.New("not used")
}

// TestFieldManagerFailureClearsManagedFields: the handlers' field manager
// (UpdateNoErrors) does not fail a write: it drops the object's
// managedFields and the write goes on to validation, whose 422 is the
// server's answer.
func TestFieldManagerFailureClearsManagedFields(t *testing.T) {
	ct := CustomType(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", true, false)
	w := &Writer{FieldManager: failingFieldManager{}}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns", "resourceVersion": "5",
			"managedFields": []any{map[string]any{"manager": "m", "operation": "Update", "apiVersion": "example.com/v1"}}},
		"spec": map[string]any{"size": "two"}}}
	cur := &Stored{Object: obj.DeepCopy(), ResourceVersion: "5"}
	out, err := w.Update(&ct, cur, obj, Options{FieldManager: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if mf := out.GetManagedFields(); len(mf) != 0 {
		t.Errorf("managedFields %v, want none", mf)
	}
}

// TestConversionWebhookCannotKnow: a write whose field manager must
// convert the stored object to another version of a CRD with a
// conversion webhook (an entry of its managedFields is in that version)
// cannot be known offline, for an apply and an update alike.
func TestConversionWebhookCannotKnow(t *testing.T) {
	crd := `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: dials.example.com}
spec:
  group: example.com
  names: {kind: Dial, plural: dials}
  scope: Namespaced
  conversion: {strategy: Webhook}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v1beta1, served: true, storage: false, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`
	tc, err := managedfields.ParseSchema([]byte(crd))
	if err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Dial"}
	ct := CustomType(gvk, "dials", false, false)
	w := &Writer{FieldManager: NewManagedFields(tc)}
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Dial",
		"metadata": map[string]any{"name": "d", "namespace": "ns", "resourceVersion": "5", "managedFields": []any{map[string]any{
			"manager": "legacy", "operation": "Apply", "apiVersion": "example.com/v1beta1", "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:spec": map[string]any{"f:size": map[string]any{}}}}}},
		"spec": map[string]any{"size": int64(1)}}}
	cur := &Stored{Object: live, ResourceVersion: "5"}
	desired := func() *unstructured.Unstructured {
		u := live.DeepCopy()
		u.SetManagedFields(nil)
		_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "size")
		return u
	}
	_, applyErr := w.Patch(&ct, cur, "ns", "d", types.ApplyPatchType, []byte(`{"apiVersion":"example.com/v1","kind":"Dial","metadata":{"name":"d"},"spec":{"size":2}}`), Options{FieldManager: "m"})
	_, updateErr := w.Update(&ct, cur, desired(), Options{FieldManager: "m"})
	for what, err := range map[string]error{"apply": applyErr, "update": updateErr} {
		var ck *CannotKnowError
		if !errors.As(err, &ck) || !strings.Contains(ck.Reason, "conversion webhook") {
			t.Errorf("%s: %v, want a CannotKnowError naming the conversion webhook", what, err)
		}
	}
}
