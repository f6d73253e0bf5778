package jsonvalue

import (
	"math"
	"slices"
	"strconv"
)

// AppendValue appends v, a decoded JSON value (map[string]any, []any,
// string, bool, nil, int64 or float64, with int and int32 besides), as
// encoding/json.Marshal writes it: compact, map keys sorted, floats in the
// same form. ok is false for any other type and for NaN and infinite
// floats, which encoding/json refuses; the caller then leaves the value to
// encoding/json, so that the two can never differ.
func AppendValue(b []byte, v any) (_ []byte, ok bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case string:
		return AppendString(b, x), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int32:
		return strconv.AppendInt(b, int64(x), 10), true
	case float64:
		return appendFloat(b, x)
	case map[string]any:
		return AppendObject(b, x, nil)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = AppendValue(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	return b, false
}

// AppendObject appends m as AppendValue does, leaving out the members for
// which skip (when not nil) is true.
func AppendObject(b []byte, m map[string]any, skip func(key string, v any) bool) (_ []byte, ok bool) {
	var small [16]string
	keys := small[:0]
	for k, v := range m {
		if skip == nil || !skip(k, v) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		if b, ok = AppendValue(b, m[k]); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// appendFloat writes f as encoding/json does: the shortest form that reads
// back the same, in exponent form below 1e-6 and from 1e21 on, with a
// one-digit negative exponent written without a leading zero.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}
