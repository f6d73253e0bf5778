package predict

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/go-openapi/jsonpointer"
)

// Op is one RFC 6902 operation.
type Op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// opJSON keeps "value" for add, replace and test even when it is null.
func (o Op) MarshalJSON() ([]byte, error) {
	if o.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.Op, o.Path, o.Value})
}

// GenerateJSONPatch returns the JSON patch a read-modify-write client
// sends to turn from into to. Like such clients it addresses list items by
// index, and it guards what the index assumes with test operations: when
// rv is set, a test of metadata.resourceVersion first (the optimistic lock
// a JSON patch can carry), and before every operation inside a list item a
// test of the item's identity (its name, or its whole old value), so a
// shifted list makes the patch fail (422) rather than edit the wrong item.
// Removals from a list go from the highest index down.
func GenerateJSONPatch(from, to map[string]any, rv string) ([]byte, error) {
	var ops []Op
	if rv != "" {
		ops = append(ops, Op{Op: "test", Path: "/metadata/resourceVersion", Value: rv})
	}
	ops = diffValue(ops, "", from, to)
	if ops == nil {
		ops = []Op{}
	}
	return json.Marshal(ops)
}

func diffValue(ops []Op, path string, a, b any) []Op {
	if jsonEqual(a, b) {
		return ops
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		return diffMap(ops, path, am, bm)
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok {
		return diffList(ops, path, al, bl)
	}
	return append(ops, Op{Op: "replace", Path: path, Value: b})
}

func diffMap(ops []Op, path string, a, b map[string]any) []Op {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := path + "/" + jsonpointer.Escape(k)
		av, inA := a[k]
		bv, inB := b[k]
		switch {
		case inA && !inB:
			ops = append(ops, Op{Op: "remove", Path: p})
		case !inA && inB:
			ops = append(ops, Op{Op: "add", Path: p, Value: bv})
		default:
			ops = diffValue(ops, p, av, bv)
		}
	}
	return ops
}

// identity returns the test a client puts before editing item i: its name
// when it has one, else its whole value.
func identity(path string, item any) Op {
	if m, ok := item.(map[string]any); ok {
		for _, k := range []string{"name", "key", "containerPort", "ip", "type"} {
			if v, ok := m[k]; ok {
				return Op{Op: "test", Path: path + "/" + k, Value: v}
			}
		}
	}
	return Op{Op: "test", Path: path, Value: item}
}

func diffList(ops []Op, path string, a, b []any) []Op {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if jsonEqual(a[i], b[i]) {
			continue
		}
		p := path + "/" + strconv.Itoa(i)
		ops = append(ops, identity(p, a[i]))
		ops = diffValue(ops, p, a[i], b[i])
	}
	for i := len(a) - 1; i >= n; i-- {
		p := path + "/" + strconv.Itoa(i)
		ops = append(ops, identity(p, a[i]), Op{Op: "remove", Path: p})
	}
	for i := n; i < len(b); i++ {
		ops = append(ops, Op{Op: "add", Path: path + "/-", Value: b[i]})
	}
	return ops
}
