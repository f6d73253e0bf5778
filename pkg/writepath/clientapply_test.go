package writepath

import (
	"encoding/json"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// FuzzClientApplyPatch holds kubectl apply's three-way patch of a
// ConfigMap to its contract, whatever the last-applied annotation holds
// (a garbled one is kubectl's own error, never a panic): the patched
// object has every key of the manifest with its value, has lost the keys
// the annotation had and the manifest has not, and keeps the others'.
func FuzzClientApplyPatch(f *testing.F) {
	f.Add(`{"a":"1","b":"1"}`, `{"a":"1","c":"x"}`, `{"a":"2"}`, true)
	f.Add(`{}`, `{"b":"1"}`, `{"b":"1"}`, false)
	f.Add(`not json`, `{"a":"1"}`, `{"a":"2"}`, true)
	f.Fuzz(func(t *testing.T, original, current, manifest string, annotate bool) {
		var orig, cur, man map[string]string
		if json.Unmarshal([]byte(current), &cur) != nil || json.Unmarshal([]byte(manifest), &man) != nil {
			return
		}
		live := configMap(cur)
		if annotate {
			ann := original
			if json.Unmarshal([]byte(original), &orig) == nil {
				b, _ := json.Marshal(configMap(orig).Object)
				ann = string(b)
			}
			live.SetAnnotations(map[string]string{LastAppliedAnnotation: ann})
		}
		r, err := ClientApplyPatch(live, configMap(man))
		if err != nil {
			if !errors.Is(err, ErrThreeWayPatch) {
				t.Fatalf("not kubectl's own failure: %v", err)
			}
			return
		}
		js, _ := live.MarshalJSON()
		out, err := strategicpatch.StrategicMergePatch(js, r.Patch, &corev1.ConfigMap{})
		if err != nil {
			t.Fatalf("applying %s: %v", r.Patch, err)
		}
		var got struct{ Data map[string]string }
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		for k, v := range man {
			if got.Data[k] != v {
				t.Errorf("%s = %q, the manifest says %q (patch %s)", k, got.Data[k], v, r.Patch)
			}
		}
		for k, v := range cur {
			_, inManifest := man[k]
			_, wasApplied := orig[k]
			switch _, has := got.Data[k]; {
			case inManifest:
			case annotate && wasApplied && has:
				t.Errorf("%s left the manifest but stays (patch %s)", k, r.Patch)
			case !(annotate && wasApplied) && got.Data[k] != v:
				t.Errorf("%s = %q, another writer's %q is lost (patch %s)", k, got.Data[k], v, r.Patch)
			}
		}
	})
}

func configMap(data map[string]string) *unstructured.Unstructured {
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "namespace": "default"},
		"data":     d,
	}}
}
