package predict

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
)

// TestJSONEqualMatchesDeepEqual compares jsonEqual with
// equality.Semantic.DeepEqual on random values built from a small alphabet,
// so that equal and nearly equal pairs are common.
func TestJSONEqualMatchesDeepEqual(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	scalars := []any{nil, "a", "", int64(1), int64(0), float64(1), float64(0), math.NaN(), true, false,
		json.Number("1"), 1, int32(1), map[string]string{"a": "b"}, map[string]string{}, []string{"a"}, []string(nil),
		map[string]any(nil), []any(nil)}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch n := rng.Intn(5); {
		case depth > 2 || n < 2:
			return scalars[rng.Intn(len(scalars))]
		case n == 2:
			l := make([]any, rng.Intn(3))
			for i := range l {
				l[i] = gen(depth + 1)
			}
			return l
		default:
			m := map[string]any{}
			for i := rng.Intn(3); i > 0; i-- {
				m[fmt.Sprint(rng.Intn(2))] = gen(depth + 1)
			}
			return m
		}
	}
	equal := 0
	for i := 0; i < 200000; i++ {
		a, b := gen(0), gen(0)
		switch rng.Intn(4) {
		case 0:
			b = a
		case 1:
			// Shared parts, as in a shallow copy.
			if m, ok := a.(map[string]any); ok {
				c := map[string]any{}
				for k, v := range m {
					c[k] = v
				}
				b = c
			}
		}
		want := equality.Semantic.DeepEqual(a, b)
		if got := jsonEqual(a, b); got != want {
			t.Fatalf("jsonEqual(%#v, %#v) = %v, DeepEqual says %v", a, b, got, want)
		}
		if want {
			equal++
		}
	}
	if equal < 1000 {
		t.Errorf("only %d equal pairs: the test compares too few equal values", equal)
	}
}
