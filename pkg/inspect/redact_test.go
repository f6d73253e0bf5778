package inspect

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

func secret(data map[string]any, applied string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "annotations": map[string]any{lastApplied: applied, "keep": "me"}},
		"data":     data,
	}}
}
