package redact

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// Patch returns a patch of type pt written against a Secret with every
// value it would set or test in data, stringData or the last-applied
// annotation hashed, re-encoded as JSON. A JSON patch's operations are
// redacted by their path; any other patch is a partial object. A patch
// that does not decode is returned with the remembered values taken out
// (see String).
func (r *Redactor) Patch(pt types.PatchType, data []byte) []byte {
	if r.show || len(data) == 0 {
		return data
	}
	var out any
	if pt == types.JSONPatchType {
		var ops []map[string]any
		if err := json.Unmarshal(data, &ops); err != nil {
			return []byte(r.String(string(data)))
		}
		for _, op := range ops {
			r.jsonPatchOp(op)
		}
		out = ops
	} else {
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil || m == nil {
			return []byte(r.String(string(data)))
		}
		out = Secret(m, r.mark)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return []byte(r.String(string(data)))
	}
	return b
}

// jsonPatchOp hashes the secret part of op's value in place: the value is
// put at its path in an otherwise empty object, that object redacted, and
// the value read back.
func (r *Redactor) jsonPatchOp(op map[string]any) {
	v, ok := op["value"]
	path, isStr := op["path"].(string)
	if !ok || !isStr {
		return
	}
	tokens := pointerTokens(path)
	if len(tokens) == 0 {
		if m, isMap := v.(map[string]any); isMap {
			op["value"] = Secret(m, r.mark)
		} else {
			op["value"] = r.mark(str(v))
		}
		return
	}
	root := map[string]any{}
	parent := root
	for _, t := range tokens[:len(tokens)-1] {
		c := map[string]any{}
		parent[t] = c
		parent = c
	}
	last := tokens[len(tokens)-1]
	parent[last] = v
	red := Secret(root, r.mark)
	for _, t := range tokens[:len(tokens)-1] {
		red, _ = red[t].(map[string]any)
	}
	if red != nil {
		op["value"] = red[last]
	}
}

// pointerTokens splits an RFC 6901 JSON pointer into its unescaped tokens.
func pointerTokens(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}
