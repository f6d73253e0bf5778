package positions

import (
	"math"
	"strconv"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
	"go.yaml.in/yaml/v3"
)

// quoted is the styles whose scalar is the string written, whatever it
// looks like, or whose tag says what it is.
const quoted = yaml.TaggedStyle | yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle |
	yaml.LiteralStyle | yaml.FoldedStyle

// scalarValue is the value the scalar n has once sigs.k8s.io/yaml has
// decoded it. That decoder resolves plain scalars by YAML 1.1 rules
// (go.yaml.in/yaml/v2: yes and on are true, 0777 is octal), where
// yaml/v3 follows YAML 1.2, so a plain scalar is resolved by yaml/v2.
func scalarValue(n *yaml.Node) any {
	var v any
	if n.Style&quoted == 0 {
		// The value of a one-line mapping, so that text that would mean
		// something else alone ("---" is a document marker) stays a scalar.
		var m map[string]any
		if err := yamlv2.Unmarshal([]byte("k: "+n.Value), &m); err == nil && isScalar(m["k"]) {
			return m["k"]
		}
		return n.Value
	}
	if err := n.Decode(&v); err != nil || !isScalar(v) {
		return n.Value
	}
	return v
}

func isScalar(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int64, uint64, float64:
		return true
	}
	return false
}

// keyString is the JSON field name sigs.k8s.io/yaml makes of the mapping
// key k, and false for a key it refuses (null, a mapping, a list).
func keyString(k *yaml.Node) (string, bool) {
	if k.Kind != yaml.ScalarNode {
		return "", false
	}
	if k.Style&quoted == 0 && k.Value != "" && !maybeNonString(k.Value) {
		return k.Value, true
	}
	switch v := scalarValue(k).(type) {
	case string:
		return v, true
	case int:
		return strconv.Itoa(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return floatKey(v), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

// maybeNonString reports whether the plain scalar s may resolve to
// something other than a string under YAML 1.1 (a number, a bool, null,
// a timestamp), so that the common keys (apiVersion, name) need no
// parse: those start with a digit, a sign, a dot or ~, or are one of
// the words below.
func maybeNonString(s string) bool {
	return strings.ContainsRune("0123456789+-.~", rune(s[0])) || yaml11Words[s]
}

// yaml11Words are the words yaml/v2 resolves to a bool or null.
var yaml11Words = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
	"null": true, "Null": true, "NULL": true,
}

// floatKey formats a float key as sigs.k8s.io/yaml does.
func floatKey(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	case math.IsNaN(f):
		return ".nan"
	}
	return strconv.FormatFloat(f, 'g', -1, 32)
}
