package jsonvalue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWithoutMeta: the keys leave the copy's metadata, the rest is shared,
// and the object given keeps every key.
func TestWithoutMeta(t *testing.T) {
	spec := map[string]any{"replicas": int64(1)}
	obj := map[string]any{"kind": "Deployment", "spec": spec,
		"metadata": map[string]any{"name": "web", "resourceVersion": "7", "managedFields": []any{}}}
	tests := []struct {
		name string
		obj  map[string]any
		keys []string
		want map[string]any
	}{
		{"two keys", obj, []string{"resourceVersion", "managedFields"},
			map[string]any{"kind": "Deployment", "spec": spec, "metadata": map[string]any{"name": "web"}}},
		{"no keys: a copy", obj, nil, obj},
		{"a key it does not have", obj, []string{"labels"}, obj},
		{"no metadata", map[string]any{"kind": "List"}, []string{"name"}, map[string]any{"kind": "List"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WithoutMeta(tt.obj, tt.keys...)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("WithoutMeta (-want +got):\n%s", diff)
			}
		})
	}
	if md := obj["metadata"].(map[string]any); len(md) != 3 {
		t.Errorf("the object given lost keys: %v", md)
	}
}
