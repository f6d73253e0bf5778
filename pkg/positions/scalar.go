package positions

import (
	"math"
	"strconv"

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
		if err := yamlv2.Unmarshal([]byte(n.Value), &v); err == nil && isScalar(v) {
			return v
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
	if k.Style&quoted == 0 && k.Value != "" && !maybeNonString(k.Value[0]) {
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

// maybeNonString reports whether a plain scalar starting with c may
// resolve to something other than a string (a number, a bool, null):
// the common keys (apiVersion, name) take the short way.
func maybeNonString(c byte) bool {
	switch c {
	case '-', '+', '.', '~', 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O':
		return true
	}
	return c >= '0' && c <= '9'
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
