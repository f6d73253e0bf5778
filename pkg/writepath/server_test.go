package writepath

import (
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// TestEmptyMetadataMapsAreDropped: the server decodes a built-in kind
// into its Go type, and a custom resource's metadata into ObjectMeta, so
// labels: {} is no field at all in either (see
// TestEmptyMetaDroppedForCustomResources). The caller's object is not
// changed.
func TestEmptyMetadataMapsAreDropped(t *testing.T) {
	for _, kind := range []string{"v1 ConfigMap", "example.com/v1 Widget"} {
		apiVersion, k, _ := strings.Cut(kind, " ")
		in := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersion, "kind": k,
			"metadata": map[string]any{"name": "c", "labels": map[string]any{}, "annotations": map[string]any{}, "finalizers": []any{}},
		}}
		out := omitEmptyMeta(in)
		md := out.Object["metadata"].(map[string]any)
		for _, f := range []string{"labels", "annotations", "finalizers"} {
			if _, ok := md[f]; ok {
				t.Errorf("%s: empty %s kept", kind, f)
			}
		}
		if _, ok := in.Object["metadata"].(map[string]any)["labels"]; !ok {
			t.Errorf("%s: the caller's object lost its labels", kind)
		}
	}
}

// TestStrategicPatchErrorsAsTheServer: a strategic merge patch whose list
// merge key is not unique fails with a 500 with no reason, as the patch
// handler answers it (the error is no API status).
func TestStrategicPatchErrorsAsTheServer(t *testing.T) {
	svc := &Type{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Service"}, Resource: "services"}
	for _, bt := range BuiltinTypes(nil) {
		if bt.GVK.Kind == "Service" {
			svc = &bt
		}
	}
	doc := []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"dns"},"spec":{"ports":[{"name":"a-udp","port":8080,"protocol":"UDP"}]}}`)
	want := []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"dns"},"spec":{"ports":[{"name":"a-udp","port":8080,"protocol":"UDP"},{"name":"b-udp","port":53,"protocol":"UDP"},{"name":"a-tcp","port":8080,"protocol":"TCP"}]}}`)
	patch, err := strategicpatch.CreateTwoWayMergePatch(doc, want, svc.New())
	if err != nil {
		t.Fatal(err)
	}
	_, err = patchDoc(svc, doc, types.StrategicMergePatchType, patch)
	st, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("want an API status, got %v", err)
	}
	if s := st.Status(); s.Code != http.StatusInternalServerError || s.Reason != "" {
		t.Errorf("got %d %q (%s), want 500 with no reason", s.Code, s.Reason, s.Message)
	}
	if _, err := patchDoc(svc, doc, types.StrategicMergePatchType, []byte(`{"spec":{"$retainKeys":"x"}}`)); err == nil {
		t.Error("a malformed $retainKeys directive: want an error")
	}
}
