package writepath

import "testing"

// TestNullsKeptForCustomResources: a custom resource is not decoded into
// a Go type; its nulls stay.
func TestNullsKeptForCustomResources(t *testing.T) {
	custom := CustomType(deployType().GVK, "widgets", true, false)
	obj := map[string]any{"spec": map[string]any{"size": nil}}
	dropNulls(&custom, obj)
	if _, ok := obj["spec"].(map[string]any)["size"]; !ok {
		t.Error("a custom resource lost its null field")
	}
}
