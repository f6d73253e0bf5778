package jsonvalue

import (
	"encoding/json"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
)

// Mode says how Equal compares numbers.
type Mode int

const (
	// Semantic compares as equality.Semantic.DeepEqual does: int64 2 and
	// float64 2 differ, since their types do. The offline API server uses
	// it to decide, as the real one does, whether a write changed anything.
	Semantic Mode = iota
	// Numeric compares numbers by value whatever their Go type: int64 2
	// equals float64 2.0, as they are the same JSON number. The diff of
	// two versions of an object uses it, so that 2 -> 2.0 is no change.
	Numeric
)

// Equal reports whether a and b, decoded JSON values, are equal in mode.
// In both modes maps and lists compare by content (an empty one equals a
// nil one, as in DeepEqual), strings, booleans and nil by value, and
// numbers by mode. Any other type is left to equality.Semantic.DeepEqual.
// Equal does not allocate and hardly reflects: comparing whole objects is
// on the hot path of the offline engine and of watch's diff.
func Equal(mode Mode, a, b any) bool {
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
			if !ok || !Equal(mode, xv, yv) {
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
			if !Equal(mode, x[i], y[i]) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	case int64:
		if f, ok := b.(float64); ok && mode == Numeric {
			return float64(x) == f
		}
		return a == b
	case float64:
		if n, ok := b.(int64); ok && mode == Numeric {
			return x == float64(n)
		}
		return a == b
	case string, bool, json.Number:
		return a == b
	}
	return equality.Semantic.DeepEqual(a, b)
}
