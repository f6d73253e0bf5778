package predict

import (
	"encoding/json"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
)

// jsonEqual is equality.Semantic.DeepEqual for the values unstructured
// objects hold, with little reflection: maps and lists compare by content
// (an empty one equals nil), scalars by type and value (int64 2 and float64 2
// differ, as they do there). Any other type is left to DeepEqual. The
// offline engine compares whole objects several times per method, and
// reflection made that a large share of its time.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		if len(x) == 0 || reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() {
			// The same map is equal to itself, NaNs and all, for DeepEqual too.
			return true
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		if len(x) == 0 || &x[0] == &y[0] {
			return true
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	case string, int64, float64, bool, json.Number:
		return a == b
	}
	return equality.Semantic.DeepEqual(a, b)
}
