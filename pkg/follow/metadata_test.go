package follow

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metadatafake "k8s.io/client-go/metadata/fake"
)

// stampFields is the field set of a manager that owns one annotation.
const stampFields = `{"f:metadata":{"f:annotations":{".":{},"f:stamp":{}}}}`

var t0 = time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)

// The metadata Source hands the tracker the metadata it reads, each
// entry's field set as its raw JSON.
func TestMetadataSourceList(t *testing.T) {
	tm := metav1.NewTime(t0)
	p := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", UID: "u1", ResourceVersion: "7", Generation: 2,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "looper", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Subresource: "status",
				Time: &tm, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(stampFields)}}}},
	}
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	client := metadatafake.NewSimpleMetadataClient(scheme, p)
	src := NewMetadataSource(client)
	l, err := src.List(context.Background(), Target{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "ns"}, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 {
		t.Fatalf("want 1 item, got %d", len(l.Items))
	}
	want := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{
		"name": "c", "namespace": "ns", "uid": "u1", "resourceVersion": "7", "generation": int64(2),
		"managedFields": []any{map[string]any{"manager": "looper", "operation": "Update", "apiVersion": "v1", "subresource": "status",
			"time": t0.Unix(), RawFieldsKey: stampFields}},
	}}
	if d := cmp.Diff(want, l.Items[0].Object); d != "" {
		t.Errorf("object (-want +got):\n%s", d)
	}
}
