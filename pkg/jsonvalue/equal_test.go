package jsonvalue

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
)

// randomValues returns a generator of random values built from scalars, so
// that equal and nearly equal pairs are common.
func randomValues(rng *rand.Rand, scalars []any) func() any {
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
	return func() any { return gen(0) }
}

// pairs calls check on random pairs, a third of them equal or sharing
// parts as a shallow copy does, and fails when fewer than 1000 pairs were
// equal by want.
func pairs(t *testing.T, scalars []any, check func(a, b any) (want bool)) {
	rng := rand.New(rand.NewSource(1))
	gen := randomValues(rng, scalars)
	equal := 0
	for i := 0; i < 200000; i++ {
		a, b := gen(), gen()
		switch rng.Intn(4) {
		case 0:
			b = a
		case 1:
			if m, ok := a.(map[string]any); ok {
				c := map[string]any{}
				for k, v := range m {
					c[k] = v
				}
				b = c
			}
		}
		if check(a, b) {
			equal++
		}
	}
	if equal < 1000 {
		t.Errorf("only %d equal pairs: the test compares too few equal values", equal)
	}
}

// TestSemanticMatchesDeepEqual holds Equal(Semantic) to
// equality.Semantic.DeepEqual.
func TestSemanticMatchesDeepEqual(t *testing.T) {
	scalars := []any{nil, "a", "", int64(1), int64(0), float64(1), float64(0), math.NaN(), true, false,
		json.Number("1"), 1, int32(1), map[string]string{"a": "b"}, map[string]string{}, []string{"a"}, []string(nil),
		map[string]any(nil), []any(nil)}
	pairs(t, scalars, func(a, b any) bool {
		want := equality.Semantic.DeepEqual(a, b)
		if got := Equal(Semantic, a, b); got != want {
			t.Fatalf("Equal(Semantic, %#v, %#v) = %v, DeepEqual says %v", a, b, got, want)
		}
		return want
	})
}

// TestNumericMatchesDeepEqualOfNumbers holds Equal(Numeric) to DeepEqual
// of the values with every int64 made a float64.
func TestNumericMatchesDeepEqualOfNumbers(t *testing.T) {
	scalars := []any{nil, "a", "", int64(1), int64(0), float64(1), float64(0), float64(0.5), true, false,
		map[string]any(nil), []any(nil)}
	var floats func(v any) any
	floats = func(v any) any {
		switch x := v.(type) {
		case int64:
			return float64(x)
		case map[string]any:
			c := make(map[string]any, len(x))
			for k, e := range x {
				c[k] = floats(e)
			}
			return c
		case []any:
			c := make([]any, len(x))
			for i, e := range x {
				c[i] = floats(e)
			}
			return c
		}
		return v
	}
	pairs(t, scalars, func(a, b any) bool {
		want := equality.Semantic.DeepEqual(floats(a), floats(b))
		if got := Equal(Numeric, a, b); got != want {
			t.Fatalf("Equal(Numeric, %#v, %#v) = %v, want %v", a, b, got, want)
		}
		return want
	})
}

func TestModesDiffer(t *testing.T) {
	if Equal(Semantic, int64(2), float64(2)) || !Equal(Numeric, int64(2), float64(2)) || !Equal(Numeric, float64(2), int64(2)) {
		t.Error("int64 2 and float64 2: Semantic must tell them apart, Numeric must not")
	}
	if Equal(Numeric, int64(2), float64(2.5)) || Equal(Numeric, "2", int64(2)) {
		t.Error("Numeric: different values must differ")
	}
}
