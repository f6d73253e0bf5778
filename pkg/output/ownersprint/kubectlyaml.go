package ownersprint

import (
	"encoding/json"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// kubectlYAML returns the bytes sigs.k8s.io/yaml.Marshal(obj) returns (the
// YAML kubectl get -o yaml prints), without its round trip through JSON.
// That marshaller encodes obj as JSON, decodes the JSON with yaml.v2 and
// encodes the result with yaml.v2; the first two steps were half of the
// blame view's CPU time on a large object. Here the tree yaml.v2 would
// decode is built from obj directly (asYAMLValue) and encoded with the same
// yaml.v2. Where the round trip changes a value in a way that is not
// modelled here (invalid UTF-8, characters the YAML reader refuses, NaN,
// types that are not JSON's), the library is called instead, so that the
// bytes, and the errors, stay the library's. FuzzKubectlYAML holds the two
// equal.
func kubectlYAML(obj map[string]any) ([]byte, error) {
	v, ok := asYAMLValue(obj)
	if !ok {
		return yaml.Marshal(obj)
	}
	return yamlv2.Marshal(v)
}

// asYAMLValue returns v as yaml.v2 decodes json.Marshal(v) into an any, in
// a form that yaml.v2 encodes to the same bytes: maps and lists copied
// (yaml.v2 sorts map keys itself, the same way for string keys of any map
// type), strings, integers, booleans and nil as they are, and floats as
// their JSON text reads back. It reports false for anything else.
func asYAMLValue(v any) (any, bool) {
	switch v := v.(type) {
	case nil, bool, int64:
		return v, true
	case string:
		return v, roundTripSafe(v)
	case float64:
		return floatAsYAML(v)
	case map[string]any:
		if v == nil {
			return nil, true // JSON's null
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			if !roundTripSafe(k) {
				return nil, false
			}
			y, ok := asYAMLValue(e)
			if !ok {
				return nil, false
			}
			out[k] = y
		}
		return out, true
	case []any:
		if v == nil {
			return nil, true
		}
		out := make([]any, len(v))
		for i, e := range v {
			y, ok := asYAMLValue(e)
			if !ok {
				return nil, false
			}
			out[i] = y
		}
		return out, true
	}
	return nil, false
}

// floatAsYAML returns what yaml.v2 reads from f's JSON text: JSON writes
// 1e6 as 1000000, which yaml.v2 reads back as an integer. Floats are rare
// in objects, so the library's own steps are used.
func floatAsYAML(f float64) (any, bool) {
	js, err := json.Marshal(f)
	if err != nil {
		return nil, false
	}
	var out any
	if err := yamlv2.Unmarshal(js, &out); err != nil {
		return nil, false
	}
	return out, true
}

// roundTripSafe reports whether s comes back unchanged from the JSON round
// trip: valid UTF-8 (JSON replaces invalid bytes with U+FFFD), and every
// character one that JSON escapes (below U+0020, U+2028, U+2029) or that
// the YAML reader accepts raw: not DEL, the C1 controls (U+0085 included,
// to be safe), U+FEFF, U+FFFE or U+FFFF. ASCII, most of every object, is
// checked byte by byte.
func roundTripSafe(s string) bool {
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < 0x7F
	}
	if ascii {
		return true
	}
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r >= 0x7F && (r <= 0x9F || r == 0xFEFF || r == 0xFFFE || r == 0xFFFF) {
			return false
		}
	}
	return true
}
